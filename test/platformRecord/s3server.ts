import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";

/**
 * A real S3-compatible server for the export's tests (s3rver on a free loopback port, in a
 * temporary folder), never a mock of the SDK. s3rver accepts its fixed key pair, which the tests
 * put in the environment for the SDK's default chain to find, as an operator's deployment would.
 */

export const S3RVER_KEYS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

export type S3Server = {
  endpoint: string;
  bucket(name: string): Promise<void>;
  put(bucket: string, key: string, body: string): Promise<void>;
  stop(): Promise<void>;
};

export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), "s3rver-platform-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: "us-east-1",
    credentials: { accessKeyId: S3RVER_KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: S3RVER_KEYS.AWS_SECRET_ACCESS_KEY },
  });
  return {
    endpoint,
    bucket: async (name) => void (await client.send(new CreateBucketCommand({ Bucket: name }))),
    put: async (bucket, key, body) =>
      void (await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "text/csv" }))),
    async stop() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
