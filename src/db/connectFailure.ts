/**
 * A database the service cannot reach, said so a person can fix it: which address was tried (the
 * password left out), what PostgreSQL or the network answered, and what to check. pg's own message
 * ("connect ECONNREFUSED 127.0.0.1:1") names neither the setting nor the fix.
 */
export class DatabaseUnreachable extends Error {
  constructor(url: string, cause: unknown) {
    super(describeConnectFailure(url, cause), { cause });
    this.name = "DatabaseUnreachable";
  }
}

/** The URL without its password: `postgres://scim:***@db:5432/scim_connector`. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(DATABASE_URL is not a URL: postgres://user:password@host:5432/database)";
  }
}

/** Error codes from node's sockets and PostgreSQL's SQLSTATEs, each with what it means here. */
const ANSWERS: Record<string, string> = {
  ECONNREFUSED: "nothing accepts connections at that host and port: check that PostgreSQL runs and listens there",
  ENOTFOUND: "the host name does not resolve: check the host in DATABASE_URL",
  EAI_AGAIN: "the host name could not be resolved now: check the host in DATABASE_URL and this machine's DNS",
  ETIMEDOUT: "the connection timed out: check the host and port, and that no firewall drops the traffic",
  EHOSTUNREACH: "the host cannot be reached: check the host in DATABASE_URL and the network",
  ECONNRESET:
    "the server closed the connection: check the port, and whether the server requires SSL (add ?sslmode=require)",
  "28P01": "PostgreSQL refused the password: check the user and password in DATABASE_URL",
  "28000": "PostgreSQL refused this user or client address (pg_hba.conf): check the user, and the server's pg_hba.conf",
  "3D000": "the database does not exist: create it (createdb) or correct its name in DATABASE_URL",
  "57P03": "PostgreSQL is starting up or shutting down: try again in a moment",
  "53300": "PostgreSQL has no connection slot left: check max_connections and DATABASE_POOL_SIZE × replicas",
};

function describeConnectFailure(url: string, cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  const answer = typeof code === "string" ? ANSWERS[code] : undefined;
  const said = cause instanceof Error ? cause.message : String(cause);
  return [
    `Cannot connect to PostgreSQL at ${withoutPassword(url)} (DATABASE_URL; the embedded PostgreSQL when it is unset).`,
    `It answered: ${said.split(url).join(withoutPassword(url))}${typeof code === "string" ? ` (${code})` : ""}.`,
    answer ? `That is: ${answer}.` : "Check the host, port, user, password and database name in DATABASE_URL.",
  ].join("\n");
}
