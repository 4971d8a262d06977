// GET /profile: outside the spec's scope (managed databases and NodeBalancers), a minimal
// read-only stand-in so off-the-shelf clients can identify the token's user. The official
// Linode CLI calls it when its config holds a bare `token` without a default user, and
// `linode-cli configure` calls it to name the user. The shape follows the real API's
// profile object; only the username (and restricted) reflect the emulator's state.
import type { Route } from "./context.ts";

export function profileRoutes(): Route[] {
  return [
    {
      method: "GET", template: "/profile", area: null, level: "read_only",
      handler: (req) => {
        const { user } = req.principal;
        return {
          body: {
            uid: 1000 + [...req.ctx.auth.users.keys()].indexOf(user.username),
            username: user.username,
            email: `${user.username}@example.com`,
            restricted: user.restricted,
            timezone: "UTC",
            email_notifications: false,
            ip_whitelist_enabled: false,
            lish_auth_method: "keys_only",
            authorized_keys: null,
            two_factor_auth: false,
            referrals: { code: "", url: "", total: 0, completed: 0, pending: 0, credit: 0 },
            authentication_type: "password",
            verified_phone_number: null,
            user_type: "default",
          },
        };
      },
    },
  ];
}
