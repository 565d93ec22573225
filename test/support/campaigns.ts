import { emulatorState, type Stack } from "./stack.js";

/** The campaign tests' mapping: Marketing gets two EU Production permissions, Sales two in US Production. */
export const TWO_WORKSPACES_MAPPING = `
department:
  default: engineering
rules:
  - group: Marketing
    workspaces:
      - name: EU Production
        permissions: [basic_access, send_campaigns_canvases]
  - group: Sales
    workspaces:
      - name: US Production
        permissions: [basic_access, export_user_data]
`;

/** The EU Production permissions the emulator holds for a user (none: an empty list). */
export async function euPermissions(stack: Stack, userName: string): Promise<string[]> {
  return (
    (await emulatorState(stack)).dashboardUsers
      .find((u) => u.userName === userName)
      ?.permissions.appGroup.find((w) => w.appGroupName === "EU Production")?.appGroupPermissions ?? []
  );
}
