// Who the console acts as, and how its calls are authorized (docs/console.md):
// - on AWS, an operator signs in on the user pool's sign-in page (OIDC authorization
//   code with PKCE, oidc-client-ts); the identity pool trades the ID token for the
//   operators group's role's temporary credentials, and every call is signed with them
//   (SigV4, aws4fetch), so the audit trail names the operator's identity;
// - on the local stack, calls carry the local key (`x-api-key`, the local gateway's
//   stand-in for SigV4), the operator's name (`x-operator`, which the gateway hands
//   on as the IAM caller) and the role chosen in the header (`x-operator-role`, which the
//   gateway holds to that role's policy in template.yaml, as IAM holds the role's
//   credentials).
// The overview's metrics come from CloudWatch's GetMetricData (`metrics`): signed the
// same way on AWS, from the local stand-in beside the console locally.
// Either way the session knows its role: `operator` may change things, `support` reads
// everything and changes nothing (the console hides what the role cannot do; the API
// refuses it anyway).
import { UserManager, WebStorageStateStore } from "oidc-client-ts";
import { CognitoIdentityClient } from "@aws-sdk/client-cognito-identity";
import { fromCognitoIdentityPool } from "@aws-sdk/credential-provider-cognito-identity";
import { AwsClient } from "aws4fetch";

const OPERATOR_KEY = "lb-console-operator";
const ROLE_KEY = "lb-console-role";
export const ROLES = ["operator", "support"];

export async function loadConfig() {
  const res = await fetch("config.json", { cache: "no-store" });
  if (!res.ok) throw new Error(`config.json: HTTP ${res.status}`);
  return res.json();
}

function localSession(config) {
  let operator = localStorage.getItem(OPERATOR_KEY) || "console";
  let role = ROLES.includes(localStorage.getItem(ROLE_KEY)) ? localStorage.getItem(ROLE_KEY) : "operator";
  return {
    mode: "local",
    get who() { return operator; },
    get role() { return role; },
    rename(name) {
      operator = name.trim() || "console";
      localStorage.setItem(OPERATOR_KEY, operator);
    },
    setRole(r) {
      role = ROLES.includes(r) ? r : "operator";
      localStorage.setItem(ROLE_KEY, role);
    },
    fetch(url, init = {}) {
      const headers = { ...(init.headers || {}), "x-api-key": config.api_key, "x-operator": operator, "x-operator-role": role };
      return fetch(url, { ...init, headers });
    },
    // CloudWatch's stand-in, served beside the console (infra/local/monitoring.py).
    metrics(body) {
      const headers = { "content-type": "application/x-www-form-urlencoded", "x-operator-role": role };
      return fetch("monitoring", { method: "POST", headers, body });
    },
    signOut: null,
  };
}

async function awsSession(config) {
  const provider = `cognito-idp.${config.region}.amazonaws.com/${config.user_pool_id}`;
  const users = new UserManager({
    authority: `https://${provider}`,
    client_id: config.client_id,
    redirect_uri: `${location.origin}/`,
    post_logout_redirect_uri: `${location.origin}/`,
    response_type: "code",
    scope: "openid email",
    userStore: new WebStorageStateStore({ store: sessionStorage }),
  });
  if (new URLSearchParams(location.search).has("code")) {
    await users.signinRedirectCallback();
    history.replaceState(null, "", `/${location.hash}`);
  }
  const user = await users.getUser();
  if (!user || user.expired) {
    await users.signinRedirect();
    return null; // the browser is on its way to the sign-in page
  }
  const credentials = fromCognitoIdentityPool({
    client: new CognitoIdentityClient({ region: config.region }),
    identityPoolId: config.identity_pool_id,
    logins: { [provider]: user.id_token },
  });
  // One signer per service (the API's execute-api, CloudWatch's monitoring), renewed
  // with the credentials five minutes before they expire.
  const signers = {};
  async function client(service) {
    const held = signers[service];
    if (held && Date.now() < held.until) return held.signer;
    const c = await credentials();
    const signer = new AwsClient({
      accessKeyId: c.accessKeyId,
      secretAccessKey: c.secretAccessKey,
      sessionToken: c.sessionToken,
      service,
      region: config.region,
    });
    signers[service] = { signer, until: (c.expiration ? c.expiration.getTime() : Date.now() + 3_600_000) - 300_000 };
    return signer;
  }
  // The token's groups decide the role the identity pool gives (operators first).
  const groups = user.profile["cognito:groups"] || [];
  return {
    mode: "aws",
    who: user.profile.email || user.profile.sub,
    role: groups.includes("operators") ? "operator" : "support",
    rename: null,
    setRole: null,
    async fetch(url, init = {}) {
      return (await client("execute-api")).fetch(url, init);
    },
    // CloudWatch's Query API, signed with the same role's credentials.
    async metrics(body) {
      const headers = { "content-type": "application/x-www-form-urlencoded" };
      return (await client("monitoring")).fetch(`https://monitoring.${config.region}.amazonaws.com/`,
        { method: "POST", headers, body });
    },
    async signOut() {
      await users.removeUser();
      location.href = `${config.sign_in}/logout?client_id=${config.client_id}&logout_uri=${encodeURIComponent(`${location.origin}/`)}`;
    },
  };
}

export async function startSession(config) {
  return config.mode === "local" ? localSession(config) : awsSession(config);
}
