/** Values several test folders share, defined once (no vitest import here, so benches can use them too). */

/** The admin JSON API's bearer token in every test stack and harness. */
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
/** /metrics' bearer token where a test sets METRICS_TOKEN. */
export const METRICS_TOKEN = "test-metrics-token-0123456789abcdef";
/** The SAML service provider the admin tests sign in to: its assertion consumer service and its entity id. */
export const ACS = "https://scim.example.test/admin/saml/acs";
export const SP_ENTITY = "https://scim.example.test/admin/saml/metadata";
export const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
