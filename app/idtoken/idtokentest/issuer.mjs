// A small OpenID provider for idvault's tests, on npm's jose (installed by .ci/install-oidc into
// the folder named by IDVAULT_OIDC_DIR). It publishes a discovery document and a key set
// (RS256 and ES256 signing keys) like any provider, and mints ID tokens, good and bad, through
// a control API the tests call:
//
//   GET  /.well-known/openid-configuration   discovery (counted)
//   GET  /jwks                                the public keys (counted)
//   POST /mint    {claims, alg, kid?, sign?, typ?} -> {"token"} (kid "-": a header without kid;
//                 typ: the header's, default JWT)
//                 sign: "key" (the current key of alg, default), "foreign" (a key the set does not
//                 hold, under kid or the current kid), "none" (alg none, unsigned), "hs256-public"
//                 (HS256 keyed with the current RSA public key, as PEM)
//   POST /rotate  {alg, keep_old}             a new current key for alg -> {"kid"}
//   POST /jwks_headers {headers}              headers of the /jwks answers from now on, over
//                                             the default Cache-Control: no-store -> {}
//   GET  /stats                               {"jwks": n, "discovery": n}
//
// It listens on 127.0.0.1, on the port given as the first argument (0: any free port), and
// prints {"port": N} on its first line of output once it listens.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';

const dir = process.env.IDVAULT_OIDC_DIR;
if (!dir) {
  console.error('issuer: IDVAULT_OIDC_DIR must name the folder jose was installed into');
  process.exit(2);
}
const require = createRequire(dir.replace(/\/?$/, '/') + 'package.json');
const jose = await import(pathToFileURL(require.resolve('jose')).href);

const keys = {};       // alg -> [{kid, privateKey, publicJwk, publicKey}], current last
const stats = { jwks: 0, discovery: 0 };
let jwksHeaders = {};
let issuer = '';

async function newKey(alg) {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const kid = alg.toLowerCase() + '-' + randomUUID().slice(0, 8);
  const publicJwk = { ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, privateKey, publicKey, publicJwk };
}

async function rotate(alg, keepOld) {
  const k = await newKey(alg);
  keys[alg] = keepOld && keys[alg] ? [...keys[alg], k] : [k];
  return k.kid;
}

for (const alg of ['RS256', 'ES256']) {
  await rotate(alg, false);
}

const b64url = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

async function mint({ claims = {}, alg = 'RS256', kid, sign = 'key', typ = 'JWT' }) {
  const current = keys[alg] ? keys[alg][keys[alg].length - 1] : null;
  const now = Math.floor(Date.now() / 1000);
  const body = { iss: issuer, iat: now, exp: now + 300, ...claims };
  for (const [name, value] of Object.entries(body)) {
    if (value === null) delete body[name]; // null removes a default claim
  }
  switch (sign) {
    case 'key': {
      const header = { alg, typ };
      if (kid !== '-') header.kid = kid ?? current.kid; // "-": no kid at all
      return new jose.SignJWT(body).setProtectedHeader(header).sign(current.privateKey);
    }
    case 'foreign': {
      const other = await newKey(alg);
      return new jose.SignJWT(body).setProtectedHeader({ alg, kid: kid ?? current.kid, typ: 'JWT' }).sign(other.privateKey);
    }
    case 'none':
      return b64url({ alg: 'none', typ: 'JWT', kid: kid ?? current.kid }) + '.' + b64url(body) + '.';
    case 'hs256-public': {
      const rsa = keys.RS256[keys.RS256.length - 1];
      const pem = await jose.exportSPKI(rsa.publicKey);
      return new jose.SignJWT(body).setProtectedHeader({ alg: 'HS256', kid: kid ?? rsa.kid, typ: 'JWT' }).sign(new TextEncoder().encode(pem));
    }
  }
  throw new Error('unknown sign: ' + sign);
}

function readJSON(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => { try { resolve(data ? JSON.parse(data) : {}); } catch (e) { reject(e); } });
    req.on('error', reject);
  });
}

function send(res, status, value, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers });
  res.end(JSON.stringify(value));
}

const server = createServer(async (req, res) => {
  try {
    const path = new URL(req.url, issuer).pathname;
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      stats.discovery++;
      return send(res, 200, {
        issuer, jwks_uri: issuer + '/jwks', authorization_endpoint: issuer + '/authorize', token_endpoint: issuer + '/token',
        response_types_supported: ['id_token'], subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      });
    }
    if (req.method === 'GET' && path === '/jwks') {
      stats.jwks++;
      return send(res, 200, { keys: Object.values(keys).flat().map((k) => k.publicJwk) }, jwksHeaders);
    }
    if (req.method === 'POST' && path === '/jwks_headers') {
      jwksHeaders = (await readJSON(req)).headers || {};
      return send(res, 200, {});
    }
    if (req.method === 'POST' && path === '/mint') {
      return send(res, 200, { token: await mint(await readJSON(req)) });
    }
    if (req.method === 'POST' && path === '/rotate') {
      const { alg = 'RS256', keep_old: keepOld = false } = await readJSON(req);
      return send(res, 200, { kid: await rotate(alg, keepOld) });
    }
    if (req.method === 'GET' && path === '/stats') {
      return send(res, 200, stats);
    }
    send(res, 404, { error: 'not found' });
  } catch (e) {
    send(res, 500, { error: String(e && e.message || e) });
  }
});

server.listen(Number(process.argv[2] || 0), '127.0.0.1', () => {
  const { port } = server.address();
  issuer = 'http://127.0.0.1:' + port;
  process.stdout.write(JSON.stringify({ port }) + '\n');
});
