import { Router } from "express";
import { z } from "zod";
import type { PlatformRecord } from "../../../platformRecord/frontDoor.js";
import { validate } from "../../validate.js";

/**
 * GET /platform/unmanaged[?all=true]: the accounts made by hand on the platform that the IdP does
 * not manage (docs/platform-record.md), as `{"accounts": [...]}`. Reads the database only; what the
 * access review may be read with (the admin token) reads it.
 */
const unmanagedQuery = z.object({ all: z.enum(["true", "false"]).optional() });

export function platformUnmanagedApiRouter(record: Pick<PlatformRecord, "unmanaged">): Router {
  const router = Router();
  router.get("/platform/unmanaged", async (req, res) => {
    const query = validate(unmanagedQuery, req.query, "query");
    res.json({ accounts: await record.unmanaged({ all: query.all === "true" }) });
  });
  return router;
}
