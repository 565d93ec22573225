import type { Database } from "../db/database.js";
import type { Page, StoredResource } from "../db/idp/paging.js";
import type { Catalogue } from "../mapping/compiled.js";
import {
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  patchGroup,
  replaceGroup,
  type GroupWithMembers,
} from "./groupCommands.js";
import { searchResources, type SearchHit } from "./searchCommands.js";
import { createUser, deleteUser, getUser, listUsers, patchUser, replaceUser, type ListQuery } from "./userCommands.js";
import type { WriteContext } from "./writeContext.js";

/** The sort a list asks for (RFC 7644 3.4.2.3), as the SCIM server parses it. */
export type { SortOrder, SortRequest } from "../db/idp/sortSql.js";

type CatalogueSource = () => Promise<Catalogue>;

/**
 * The IdP's directory as the SCIM server calls it (src/http/scim): the user, group and root-search
 * commands over the database, built once per process (src/service/http.ts). Each method passes its
 * arguments on as they are: the SCIM path is hot, and this object adds no allocation per request.
 */
export type ScimDirectory = {
  users: {
    list(query: ListQuery): Promise<Page<StoredResource>>;
    create(body: unknown, context: WriteContext, catalogue?: CatalogueSource): Promise<StoredResource>;
    get(id: string): Promise<StoredResource>;
    replace(id: string, body: unknown, context: WriteContext, catalogue?: CatalogueSource): Promise<StoredResource>;
    patch(id: string, body: unknown, context: WriteContext, catalogue?: CatalogueSource): Promise<StoredResource>;
    remove(id: string, context: WriteContext): Promise<void>;
  };
  groups: {
    list(query: ListQuery, includeMembers: boolean): Promise<Page<GroupWithMembers>>;
    create(body: unknown, context: WriteContext): Promise<GroupWithMembers>;
    get(id: string, includeMembers: boolean): Promise<GroupWithMembers>;
    replace(id: string, body: unknown, context: WriteContext): Promise<GroupWithMembers>;
    patch(id: string, body: unknown, context: WriteContext): Promise<StoredResource>;
    remove(id: string, context: WriteContext): Promise<void>;
  };
  /** POST /.search at the root: Users and Groups in one page. */
  search(query: ListQuery, includeMembers: boolean): Promise<Page<SearchHit>>;
};

export function createScimDirectory(db: Database): ScimDirectory {
  return {
    users: {
      list: (query) => listUsers(db, query),
      create: (body, context, catalogue) => createUser(db, body, context, catalogue),
      get: (id) => getUser(db, id),
      replace: (id, body, context, catalogue) => replaceUser(db, id, body, context, catalogue),
      patch: (id, body, context, catalogue) => patchUser(db, id, body, context, catalogue),
      remove: (id, context) => deleteUser(db, id, context),
    },
    groups: {
      list: (query, includeMembers) => listGroups(db, query, includeMembers),
      create: (body, context) => createGroup(db, body, context),
      get: (id, includeMembers) => getGroup(db, id, includeMembers),
      replace: (id, body, context) => replaceGroup(db, id, body, context),
      patch: (id, body, context) => patchGroup(db, id, body, context),
      remove: (id, context) => deleteGroup(db, id, context),
    },
    search: (query, includeMembers) => searchResources(db, query, includeMembers),
  };
}
