// Where the example signs in and which idvault it calls: edit these three values for your
// setup (the browser test serves its own config.js).
window.exampleConfig = {
  // The OpenID provider: identity_server.oidc.issuer.
  issuer: 'https://auth.example.com',
  // The provider's client for this page (public: no secret, authorization code with PKCE):
  // identity_server.oidc.audience. Its redirect URI is this page's address.
  clientId: 'web-client',
  // idvault's base URL. This page's origin must be in identity_server.cors_origins.
  api: 'http://127.0.0.1:8080',
};
