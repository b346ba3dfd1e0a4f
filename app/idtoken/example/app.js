// A single-page app that signs in with an OpenID provider (authorization code with PKCE) and
// calls idvault's identity server with the ID token. Plain JavaScript, no build step, no
// library: the parts an app needs, each in one function.
//
// The page never checks the ID token's signature: idvault does, on every call. The page only
// reads its claims to show who is signed in. The token is kept in sessionStorage (this tab
// only); it gives whoever holds it this user's own identity, so the page loads no script from
// elsewhere.
'use strict';

const cfg = window.exampleConfig;
const store = window.sessionStorage;
const $ = (id) => document.getElementById(id);

// ---- Sign-in: authorization code with PKCE ---------------------------------------------

function base64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

// The provider's endpoints, from its discovery document.
async function discovery() {
  const resp = await fetch(cfg.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration');
  if (!resp.ok) throw new Error('the provider\'s discovery document: HTTP ' + resp.status);
  return resp.json();
}

// This page's address, registered at the provider as the client's redirect URI.
function redirectURI() {
  return location.origin + location.pathname;
}

// signIn sends the browser to the provider. again asks it for a new login (prompt=login), to
// sign in as someone else.
async function signIn(again) {
  const d = await discovery();
  const request = { verifier: randomString(), state: randomString(), nonce: randomString() };
  store.setItem('signin', JSON.stringify(request));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(request.verifier)));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: cfg.clientId,
    redirect_uri: redirectURI(),
    // email: the provider must put the email (and email_verified) in the ID token itself.
    scope: 'openid email',
    state: request.state,
    nonce: request.nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (again) query.set('prompt', 'login');
  location.assign(d.authorization_endpoint + '?' + query);
}

// finishSignIn exchanges the code the provider sent back for the ID token.
async function finishSignIn(params) {
  const request = JSON.parse(store.getItem('signin') || 'null');
  store.removeItem('signin');
  history.replaceState(null, '', redirectURI()); // the code leaves the address bar and history
  if (params.get('error')) {
    throw new Error('the provider refused the sign-in: ' + params.get('error'));
  }
  if (!request || params.get('state') !== request.state) {
    throw new Error('this answer is not for a sign-in this page started (state)');
  }
  const d = await discovery();
  const resp = await fetch(d.token_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code'),
      redirect_uri: redirectURI(),
      client_id: cfg.clientId,
      code_verifier: request.verifier,
    }),
  });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok || !body.id_token) {
    throw new Error('the provider\'s token endpoint: HTTP ' + resp.status + ' ' + (body.error || ''));
  }
  if (claimsOf(body.id_token).nonce !== request.nonce) {
    throw new Error('the ID token is not for this sign-in (nonce)');
  }
  store.setItem('id_token', body.id_token);
}

// claimsOf reads an ID token's claims, for display only (idvault checks the signature).
function claimsOf(token) {
  const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0))));
}

// ---- Calling idvault ---------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The 403 answers, told apart by their code.
const forbidden = {
  forbidden: 'idvault serves your own identity only: this email is not the one you signed in with.',
  email_not_verified: 'Your provider has not verified your email: verify it there, then sign in again.',
  no_email_claim: 'Your provider did not put your email in the ID token (it needs the email scope, and the email in the ID token).',
};

// call sends {"email"} to idvault with the ID token and returns the answer when it is a
// success, or null after showing what went wrong: 401 (sign in again), 403 (by code), 429 and
// 503 (waits for Retry-After and tries again, a few times), a refused or failed request.
async function call(method, path, email, out) {
  for (let attempt = 1; ; attempt++) {
    const token = store.getItem('id_token');
    if (!token) {
      signedOut('Sign in first.');
      return null;
    }
    let resp;
    try {
      resp = await fetch(cfg.api + path, {
        method,
        headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email }),
      });
    } catch (e) {
      // The browser tells no more: idvault is down, or refused this origin (CORS).
      show(out, 'idvault cannot be reached from ' + location.origin + ' (is it in identity_server.cors_origins?): ' + e.message, 'blocked');
      return null;
    }
    if (resp.ok) {
      show('status', '', '');
      return resp;
    }
    const err = await resp.json().catch(() => ({ error: 'HTTP ' + resp.status }));
    const wait = Number(resp.headers.get('Retry-After')) || 2;
    switch (resp.status) {
      case 401:
        store.removeItem('id_token');
        signedOut('Your sign-in was refused (' + err.error + '): sign in again.');
        show(out, err.error, err.code);
        return null;
      case 403:
        show(out, forbidden[err.code] || err.error, err.code);
        return null;
      case 429:
      case 503:
        if (attempt < 10 && wait <= 60) {
          show('status', err.error + ': trying again in ' + wait + ' s (attempt ' + attempt + ').', 'retrying');
          await sleep(wait * 1000);
          continue;
        }
        show('status', '', '');
        show(out, err.error + ': try again in ' + wait + ' s.', err.code);
        return null;
      default:
        show(out, err.error, err.code);
        return null;
    }
  }
}

async function fetchIdentity() {
  const resp = await call('POST', '/identity', $('email').value, 'identity-result');
  if (!resp) return;
  const id = await resp.json();
  // A real app hands id.serviceIdentity to Tanker's start(); never show or log it.
  show('identity-result', 'Identity received (' + id.serviceIdentity.length + ' characters), user ' + id.id +
    ', registered: ' + id.registered + (id.provisionalIdentity ? ', with a provisional identity' : '') + '.', 'ok');
}

async function register() {
  const resp = await call('PATCH', '/identity', $('email').value, 'identity-result');
  if (resp) show('identity-result', 'Registered.', 'ok');
}

async function fetchPublicIdentity() {
  const email = $('share-email').value;
  const resp = await call('POST', '/public_identity', email, 'public-result');
  if (!resp) return;
  const { publicIdentity } = await resp.json();
  show('public-result', 'Public identity of ' + email + ': ' + publicIdentity.slice(0, 24) + '...', 'ok');
}

// ---- The page ----------------------------------------------------------------------------

// show writes a message and its code (ok, a catalogue code, blocked, retrying) into element id.
function show(id, text, code) {
  $(id).textContent = text;
  $(id).dataset.code = code;
}

function signedOut(why) {
  render();
  show('status', why, 'signed_out');
}

function render() {
  const token = store.getItem('id_token');
  const claims = token ? claimsOf(token) : null;
  for (const id of ['identity', 'register', 'public']) $(id).disabled = !claims;
  if (!claims) {
    $('user').textContent = 'Not signed in.';
    $('user').dataset.state = 'signed-out';
    return;
  }
  $('user').textContent = 'Signed in as ' + (claims.email || claims.sub) +
    (claims.email_verified === true ? ' (verified).' : ' (not verified by the provider).');
  $('user').dataset.state = 'signed-in';
  $('email').value = claims.email || '';
}

function guard(action) {
  return () => action().catch((e) => show('status', e.message, 'error'));
}

$('signin').addEventListener('click', guard(() => signIn(false)));
$('switch').addEventListener('click', guard(() => signIn(true)));
$('identity').addEventListener('click', guard(fetchIdentity));
$('register').addEventListener('click', guard(register));
$('public').addEventListener('click', guard(fetchPublicIdentity));

(async () => {
  const params = new URLSearchParams(location.search);
  if (params.has('code') || params.has('error')) {
    await finishSignIn(params).catch((e) => show('status', e.message, 'sign_in_failed'));
  }
  render();
})();
