// A real OpenID provider for the browser example's test: oidc-provider (npm, installed with jose
// by .ci/install-oidc into the folder named by IDVAULT_OIDC_DIR), with one public client
// (authorization code with PKCE, no secret), as a single-page app uses it.
//
//   node provider.mjs PORT CLIENT_ID KEYS_FILE REDIRECT_URI...
//
// It listens on 127.0.0.1:PORT (0: any free port), and prints {"port": N} on its first line of
// output once it listens. Its signing key (RS256) is read from KEYS_FILE, or made and written
// there: a provider started again on the same port with the same file is the same provider.
//
// Sign-in is oidc-provider's development login page: any login and any password. The login is
// the account: "alice" is alice@example.com, verified; a login that starts with "unverified"
// has email_verified false, one that starts with "noemail" no email at all; a login with an "@"
// is that address. Consent is granted at once for
// the openid and email scopes (a first-party app). The ID token carries email and
// email_verified (conformIdTokenClaims false): idvault reads them there, never at userinfo.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';

const dir = process.env.IDVAULT_OIDC_DIR;
if (!dir) {
  console.error('provider: IDVAULT_OIDC_DIR must name the folder oidc-provider was installed into');
  process.exit(2);
}
const require = createRequire(dir.replace(/\/?$/, '/') + 'package.json');
const { default: Provider } = await import(pathToFileURL(require.resolve('oidc-provider')).href);
const jose = await import(pathToFileURL(require.resolve('jose')).href);

const [port, clientId, keysFile, ...redirectUris] = process.argv.slice(2);
if (!clientId || !keysFile || redirectUris.length === 0) {
  console.error('usage: provider.mjs PORT CLIENT_ID KEYS_FILE REDIRECT_URI...');
  process.exit(2);
}

async function signingKey() {
  if (existsSync(keysFile)) {
    return JSON.parse(readFileSync(keysFile, 'utf8'));
  }
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'rs256-' + randomUUID().slice(0, 8), alg: 'RS256', use: 'sig' };
  writeFileSync(keysFile, JSON.stringify(jwk), { mode: 0o600 });
  return jwk;
}

function account(id) {
  const email = id.includes('@') ? id : id + '@example.com';
  return {
    accountId: id,
    claims: async () => (id.startsWith('noemail') ? { sub: id } : { sub: id, email, email_verified: !id.startsWith('unverified') }),
  };
}

const key = await signingKey();
let handle = (req, res) => { res.statusCode = 503; res.end(); };
const server = createServer((req, res) => handle(req, res));

server.listen(Number(port || 0), '127.0.0.1', () => {
  const issuer = 'http://127.0.0.1:' + server.address().port;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys: [key] },
    scopes: ['openid', 'email'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: false,
    findAccount: async (ctx, id) => account(id),
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) {
        return ctx.oidc.provider.Grant.find(grantId);
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
    clientBasedCORS: (ctx, origin, client) => client.redirectUris.some((u) => new URL(u).origin === origin),
    cookies: { keys: ['idvault-browser-example-test-only'] },
    features: { devInteractions: { enabled: true } },
  });
  handle = provider.callback();
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
