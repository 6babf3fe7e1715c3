// provider.mjs — the OpenID provider of the single sign-on tests (tests/http/test_oidc.py,
// tests/web/oidc.test.mjs): oidc-provider from the npm registry (a certified
// implementation, pinned in package.json) on 127.0.0.1, with one confidential client and
// its own development sign-in page (devInteractions: the login name typed becomes the
// account and its `sub`; the password is not checked). Consent is granted at once (a
// first-party client), so a sign-in is: authorization → sign-in page → back to the client.
//
// Environment: OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS (comma-
// separated). Prints "ready <issuer>" when it listens.
//
// Failure cases: POST /__test/tamper?mode=M changes the ID tokens the token endpoint
// answers from then on, after the provider made them: "aud" (another audience), "expired"
// (exp and iat an hour ago), "signature" (signed by another key with the same kid),
// "nonce" (another nonce); "" turns it off. The changed tokens are signed again with the
// provider's own key (but for "signature"), so only the changed claim is wrong.
import Provider from 'oidc-provider';
import crypto from 'node:crypto';

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const clientId = process.env.OIDC_CLIENT_ID || 'inkwell';
const clientSecret = process.env.OIDC_CLIENT_SECRET || 'test-client-secret';
const redirects = (process.env.OIDC_REDIRECT_URIS || '').split(',').filter(Boolean);

const key = crypto.generateKeyPairSync('rsa', {modulusLength: 2048}).privateKey;
const other = crypto.generateKeyPairSync('rsa', {modulusLength: 2048}).privateKey;
const jwk = {...key.export({format: 'jwk'}), kid: 'test-key-1', use: 'sig', alg: 'RS256'};

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId, client_secret: clientSecret, redirect_uris: redirects,
    grant_types: ['authorization_code'], response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: {keys: [jwk]},
  pkce: {required: () => true},
  claims: {openid: ['sub'], profile: ['preferred_username', 'name']},
  conformIdTokenClaims: false, // the profile claims in the ID token itself
  findAccount: (ctx, id) => ({
    accountId: id,
    claims: () => ({sub: id, preferred_username: id, name: id}),
  }),
  features: {devInteractions: {enabled: true}},
  cookies: {keys: ['inkwell-test-cookie-key']},
  // a first-party client: the grant is given without a consent page
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId ||
      ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid profile');
    await grant.save();
    return grant;
  },
});

let mode = '';
const b64 = (b) => Buffer.from(b).toString('base64url');

function tamper(token) {
  const [h, p] = token.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
  const now = Math.floor(Date.now() / 1000);
  if (mode === 'aud') claims.aud = 'someone-else';
  if (mode === 'expired') { claims.exp = now - 3600; claims.iat = now - 7200; }
  if (mode === 'nonce') claims.nonce = 'not-the-nonce';
  const body = `${h}.${b64(JSON.stringify(claims))}`;
  const sig = crypto.sign('sha256', Buffer.from(body), mode === 'signature' ? other : key);
  return `${body}.${b64(sig)}`;
}

provider.use(async (ctx, next) => {
  if (ctx.path === '/__test/tamper' && ctx.method === 'POST') {
    mode = String(ctx.query.mode || '');
    ctx.status = 204;
    return;
  }
  await next();
  if (mode && ctx.path === '/token' && ctx.body && ctx.body.id_token)
    ctx.body = {...ctx.body, id_token: tamper(ctx.body.id_token)};
});

provider.listen(port, '127.0.0.1', () => console.log(`ready ${issuer}`));
