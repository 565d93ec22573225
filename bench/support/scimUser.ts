/** The user every SCIM bench stores: core and enterprise attributes, as Okta and Entra send them. */
export function benchUser(userName: string) {
  return {
    schemas: [
      "urn:ietf:params:scim:schemas:core:2.0:User",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
    ],
    userName,
    name: { givenName: "Bench", familyName: "User" },
    emails: [{ value: userName, type: "work", primary: true }],
    displayName: "Bench User",
    active: true,
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Engineering" },
  };
}
