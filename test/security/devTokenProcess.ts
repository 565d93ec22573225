// One `npm start`-style process's share of the development IdP token, as a child process:
// `node --import tsx test/security/devTokenProcess.ts <databaseUrl> <dataDir>` prints the token
// that process would put in its banner. Used by test/security/devToken.test.ts.
import { ensureDevScimToken } from "../../src/cli/boot.js";
import { openDatabase } from "../../src/db/dataSource.js";

const [databaseUrl, dataDir] = process.argv.slice(2);
const db = await openDatabase({ url: databaseUrl!, poolSize: 2, applicationName: "scim-connector-test" });
try {
  process.stdout.write(`${await ensureDevScimToken(db, dataDir!)}\n`);
} finally {
  await db.close();
}
