import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import S3rver from "s3rver";

/**
 * A real S3-compatible server for the tests (s3rver, on a free loopback port and a temporary
 * folder), never a mock of the SDK. Its credentials are s3rver's fixed pair, given in the clients'
 * config, not in the process environment.
 */

export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** The same key pair in the environment, where the SDK's default chain finds it, as an operator's deployment gives it. */
export const S3RVER_KEYS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

export type TestS3 = {
  /** `http://127.0.0.1:<port>`: path-style. */
  endpoint: string;
  /** Client settings for this server (endpoint, path-style, region, credentials). */
  config: S3ClientConfig;
  /** Creates a bucket. */
  bucket(name: string): Promise<void>;
  /** Writes an object (a CSV). */
  put(bucket: string, key: string, body: string): Promise<void>;
  /** Object keys under `prefix`, sorted. */
  keys(bucket: string, prefix?: string): Promise<string[]>;
  /** An object's body as text. */
  text(bucket: string, key: string): Promise<string>;
  stop(): Promise<void>;
};

export async function startS3(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const config: S3ClientConfig = {
    endpoint,
    forcePathStyle: true,
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
  };
  const client = new S3Client(config);
  return {
    endpoint,
    config,
    bucket: async (name) => {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    put: async (bucket, key, body) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "text/csv" }));
    },
    keys: async (bucket, prefix) => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((o) => o.Key!).sort();
    },
    text: async (bucket, key) => {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return got.Body!.transformToString("utf-8");
    },
    stop: async () => {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
