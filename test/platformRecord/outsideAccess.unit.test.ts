import { describe, expect, it } from "vitest";
import { outsideAccess, undoWords, withOutsideAccess, accessWords } from "../../src/reconcile/outsideAccess.js";
import { diffDashboardUsers } from "../../src/reconcile/diff.js";
import { triggerFacts, triggerLabel } from "../../src/vocabulary/reconcile.js";
import type { DesiredDashboardUser } from "../../src/mapping/types.js";

const user = (companyPermissions: string[], eu: string[], lifecycle: string[] = []): DesiredDashboardUser => ({
  userName: "ann@example.com",
  givenName: "ann",
  familyName: "Test",
  department: "marketing",
  companyPermissions,
  workspaces: [
    {
      appGroupName: "EU Production",
      appGroupPermissions: eu,
      appGroupPermissionSets: [],
      team: lifecycle.length ? [{ teamName: "Lifecycle", teamPermissions: lifecycle }] : [],
    },
  ],
});

describe("access changed outside the connector", () => {
  const desired = user([], ["basic_access", "send_campaigns_canvases"]);
  const observed = user(["admin"], ["basic_access", "export_user_data"], ["view_segments"]);

  it("tells what the dashboard granted and what it took away", () => {
    const outside = outsideAccess(desired, observed);
    expect(accessWords(outside.granted)).toEqual([
      "admin",
      "EU Production: export_user_data",
      "EU Production: team Lifecycle: view_segments",
    ]);
    expect(accessWords(outside.withdrawn)).toEqual(["EU Production: send_campaigns_canvases"]);
  });

  it("applied to the desired state, gives back what the account holds: the planner has nothing to undo", () => {
    const kept = withOutsideAccess(desired, outsideAccess(desired, observed));
    expect(diffDashboardUsers(observed, kept)).toEqual([]);
    // A later grant from the IdP comes on top of what the dashboard changed.
    const later = withOutsideAccess(
      user([], ["basic_access", "send_campaigns_canvases", "view_usage"]),
      outsideAccess(desired, observed),
    );
    expect(later.workspaces[0]!.appGroupPermissions).toEqual(["basic_access", "export_user_data", "view_usage"]);
  });

  it("words what putting the last applied state back undoes", () => {
    expect(undoWords(diffDashboardUsers(desired, observed))).toBe(
      "removed again: admin, EU Production: export_user_data, EU Production, team Lifecycle: view_segments; put back: EU Production: send_campaigns_canvases",
    );
    expect(undoWords([])).toBe("nothing to undo");
  });

  it("words the platform trigger for the log, with its facts", () => {
    const trigger = {
      kind: "platform",
      event: "permissions-changed",
      name: "Updated Account Permission",
      actor: "ops-admin@example.com",
      at: "2026-12-06T10:02:31.000Z",
    };
    expect(triggerLabel(trigger)).toBe("changed in the platform's dashboard by ops-admin@example.com at 10:02 UTC");
    expect(triggerLabel({ ...trigger, event: "account-removed" })).toBe(
      "removed in the platform's dashboard by ops-admin@example.com at 10:02 UTC",
    );
    expect(triggerFacts(trigger)).toEqual([
      { label: "Platform event", value: "Updated Account Permission" },
      { label: "Changed by", value: "ops-admin@example.com" },
      { label: "Changed at", value: "2026-12-06T10:02:31.000Z" },
    ]);
  });
});
