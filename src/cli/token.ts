import { parseArgs } from "node:util";
import { OAuthClients, type NewSecret } from "../auth/oauth/clients.js";
import { generateToken, hashToken } from "../auth/scimTokens.js";
import { systemClock } from "../clock.js";
import type { Database } from "../db/database.js";
import { OAuthRepository } from "../db/auth/oauthRepository.js";
import { TokenRepository } from "../db/auth/tokenRepository.js";
import { listCredentials } from "../admin/credentials.js";

/**
 * `scim-connector token …`: the IdP's credentials. Bearer tokens (create, revoke), OAuth clients
 * with secrets (client create, client secret, client revoke, secret revoke), assertion clients
 * (client revoke, client reinstate), and one list of every credential with its kind, last use and
 * expiry (never a secret).
 */

export const TOKEN_USAGE = `  token create --name NAME   create an IdP bearer token (shown once; migrates a fresh database first)
  token list                 list every IdP credential: bearer tokens, OAuth client secrets, assertion
                             clients and live access tokens, with kind, last use and expiry (never a secret)
  token revoke NAME|ID       revoke an IdP bearer token
  token client create --name NAME [--expires-days N] [--redirect-uri URL ...]
                             create an OAuth client (client_id NAME) and its first secret (shown once);
                             --redirect-uri lets it use the authorization code grant (Okta)
  token client secret NAME [--expires-days N]
                             add a secret to a client (rotation: both work until the old one is revoked)
  token client revoke NAME   revoke a client: its secrets and access tokens stop at once (an assertion
                             client's name stays revoked: assertions get no token until it is reinstated)
  token client reinstate NAME
                             let assertions have tokens again under a revoked assertion client's name
  token secret revoke ID     revoke one client secret (its id from \`token list\`)`;

export function tokenMigrates(args: string[]): boolean | "fresh" {
  return args[0] === "create" || (args[0] === "client" && args[1] === "create") ? "fresh" : false;
}

export async function tokenCommand(db: Database, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      name: { type: "string" },
      "expires-days": { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
    },
    allowPositionals: true,
  });
  const tokens = new TokenRepository(db);
  const clients = new OAuthClients(new OAuthRepository(db), systemClock);
  const expiresDays = values["expires-days"] === undefined ? undefined : Number(values["expires-days"]);
  if (sub === "create") {
    const name = values.name ?? positionals[0];
    if (!name) throw new Error("token create needs --name NAME (for example --name okta)");
    const token = generateToken();
    await tokens.create(name, hashToken(token), token.slice(0, 10));
    console.log(`Created token "${name}". It is shown only this once; store it in your IdP now:\n\n  ${token}\n`);
  } else if (sub === "list") {
    const all = await listCredentials(db, systemClock.now());
    if (!all.length) console.log("No credentials.");
    for (const c of all) console.log(c.line);
  } else if (sub === "revoke") {
    const target = positionals[0] ?? values.name;
    if (!target) throw new Error("token revoke needs a token name or id");
    report(await tokens.revoke(target), `token(s)`, target);
  } else if (sub === "client") {
    const [action, target = values.name] = positionals;
    if (action === "create") {
      if (!target) throw new Error("token client create needs --name NAME (it is the client_id)");
      printSecret(await clients.create(target, expiresDays, values["redirect-uri"] ?? []), true);
    } else if (action === "secret") {
      if (!target) throw new Error("token client secret needs the client's name or id");
      printSecret(await clients.addSecret(target, expiresDays), false);
    } else if (action === "revoke") {
      if (!target) throw new Error("token client revoke needs the client's name or id");
      report(await clients.revokeClient(target), "client(s)", target);
    } else if (action === "reinstate") {
      if (!target) throw new Error("token client reinstate needs the assertion client's name");
      if (await clients.reinstateAssertionClient(target))
        console.log(`Reinstated the assertion client "${target}": accepted assertions get tokens again.`);
      else {
        console.log(`No revoked assertion client named "${target}" (or it is active already).`);
        process.exitCode = 1;
      }
    } else throw new Error("token client needs a subcommand: create, secret, revoke or reinstate");
  } else if (sub === "secret" && positionals[0] === "revoke") {
    if (!positionals[1]) throw new Error("token secret revoke needs the secret's id (from `token list`)");
    report(await clients.revokeSecret(positionals[1]), "secret(s)", positionals[1]);
  } else {
    throw new Error("token needs a subcommand: create, list, revoke, client or secret");
  }
}

function printSecret(made: NewSecret, isNew: boolean): void {
  const expiry = made.expiresAt ? `expires ${made.expiresAt.toISOString()}` : "does not expire";
  console.log(
    `${isNew ? "Created client" : "Added a secret to client"} "${made.clientId}" (secret id ${made.secretId}, ${expiry}).\n` +
      `The secret is shown only this once; store it in your IdP now:\n\n  client_id      ${made.clientId}\n  client_secret  ${made.secret}\n`,
  );
}

function report(count: number, what: string, target: string): void {
  console.log(count ? `Revoked ${count} ${what}.` : `Nothing active named or with id "${target}".`);
  if (!count) process.exitCode = 1;
}
