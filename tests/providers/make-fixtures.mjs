#!/usr/bin/env node
// make-fixtures.mjs [--now UNIX_SECONDS] [--out DIR]
//
// Writes DIR/<provider>.json: one signed webhook request per provider,
// made with the provider's own npm library wherever that library can sign,
// checked with the library's own verifier wherever it has one, and built
// from the provider's documented algorithm where no library does either.
// Every fixture is also checked the other way: the same request with one
// body byte changed must be rejected. Any disagreement exits 1, naming the
// provider. The output depends on --now alone (default 1796119205): run it
// twice, get the same bytes. See README.md beside this file.

import { Buffer } from 'node:buffer';
import crypto from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import Stripe from 'stripe';
import Mux from '@mux/mux-node';
import replicatePkg from 'replicate';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import cloudinaryPkg from 'cloudinary';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import '@shopify/shopify-api/adapters/web-api';
import { shopifyApi, ApiVersion, LogSeverity } from '@shopify/shopify-api';
import boltPkg from '@slack/bolt';
import { AwsLambdaReceiver as ZoomLambdaReceiver } from '@zoom/rivet/meetings';
import squarePkg from 'square';
import twilio from 'twilio';
import { encodeSignatureHeader as sanitySign, isValidSignature as sanityValid } from '@sanity/webhook';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..', '..');

// ---- arguments -------------------------------------------------------------

function parseArgs(argv) {
  const opts = { now: 1796119205, out: join(HERE, 'fixtures') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--now') {
      const v = value();
      if (!/^[0-9]{9,11}$/.test(v)) usage(`--now wants unix seconds, got ${v}`);
      opts.now = Number(v);
    } else if (a === '--out') {
      opts.out = resolve(value());
    } else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: make-fixtures.mjs [--now UNIX_SECONDS] [--out DIR]\n');
      process.exit(0);
    } else {
      usage(`unknown argument ${a}`);
    }
  }
  return opts;
}

function usage(msg) {
  process.stderr.write(`make-fixtures: ${msg}\nusage: make-fixtures.mjs [--now UNIX_SECONDS] [--out DIR]\n`);
  process.exit(2);
}

// ---- helpers ---------------------------------------------------------------

const version = (pkg) => JSON.parse(readFileSync(join(HERE, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const lib = (pkg, what) => `${pkg}@${version(pkg)}: ${what}`;
const readSample = (rel) => readFileSync(join(REPO, rel), 'utf8');
const urlFor = (provider) => `https://hooks.example.com/hooks/${provider}`;

const hmac = (alg, key, data, enc) => crypto.createHmac(alg, key).update(data, 'utf8').digest(enc);
const sha256 = (label) => crypto.createHash('sha256').update(label).digest();
const sameText = (a, b) =>
  typeof a === 'string' && typeof b === 'string' && a.length === b.length &&
  crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));

// Runs fn with Date.now() pinned to ms, for verifiers that read the clock.
async function atTime(ms, fn) {
  const real = Date.now;
  Date.now = () => ms;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

// Returns whether fn accepted: true, or false when it returned a falsy value or threw.
async function accepts(fn) {
  try {
    const r = await fn();
    return r !== false && r !== undefined && r !== null;
  } catch {
    return false;
  }
}

// The body with one byte changed: an ASCII letter or digit inside a JSON
// string (or, for a form, inside a name or value, never in a %XX escape),
// the candidate nearest the middle, moved to the next letter or digit. The
// result still parses, so a rejection is the signature's doing.
function mutate(body, contentType) {
  const candidates = [];
  const alnum = (ch) => /[A-Za-z0-9]/.test(ch);
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    for (let i = 0; i < body.length; i++) {
      if (body[i] === '%') { i += 2; continue; }
      if (alnum(body[i])) candidates.push(i);
    }
  } else {
    let inString = false;
    for (let i = 0; i < body.length; i++) {
      const ch = body[i];
      if (inString) {
        if (ch === '\\') { i++; continue; }
        if (ch === '"') { inString = false; continue; }
        if (alnum(ch)) candidates.push(i);
      } else if (ch === '"') {
        inString = true;
      }
    }
  }
  if (!candidates.length) throw new Error('no byte to change');
  const mid = body.length / 2;
  const at = candidates.reduce((best, i) => (Math.abs(i - mid) < Math.abs(best - mid) ? i : best));
  const ch = body[at];
  const next = ch === '9' ? '0' : ch === 'z' ? 'a' : ch === 'Z' ? 'A' : String.fromCharCode(ch.charCodeAt(0) + 1);
  return body.slice(0, at) + next + body.slice(at + 1);
}

// ---- Standard Webhooks v1a (Ed25519) by node:crypto ------------------------
// The standardwebhooks package implements v1 (HMAC-SHA256) only. v1a keys as
// the reference server (svix-webhooks) serializes them: whsk_ = base64 of the
// 64-byte seed||public key, whpk_ = base64 of the 32-byte public key.

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

function ed25519FromSeed(seed) {
  const privateKey = crypto.createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicRaw = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicRaw };
}

function v1aKeysFromWhsk(whsk) {
  const raw = Buffer.from(whsk.replace(/^whsk_/, ''), 'base64');
  if (raw.length !== 64) throw new Error(`whsk_ key is ${raw.length} bytes, not 64`);
  const { privateKey, publicRaw } = ed25519FromSeed(raw.subarray(0, 32));
  if (!publicRaw.equals(raw.subarray(32))) throw new Error('whsk_ key: public half does not match the seed');
  return { privateKey, publicRaw };
}

const v1aSign = (privateKey, id, t, body) =>
  `v1a,${crypto.sign(null, Buffer.from(`${id}.${t}.${body}`, 'utf8'), privateKey).toString('base64')}`;

function v1aVerify(whpk, headers, body) {
  const key = crypto.createPublicKey({
    key: Buffer.concat([SPKI_ED25519, Buffer.from(whpk.replace(/^whpk_/, ''), 'base64')]),
    format: 'der', type: 'spki',
  });
  const data = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`, 'utf8');
  return headers['webhook-signature'].split(' ').some((s) => {
    const [ver, sig] = s.split(',');
    return ver === 'v1a' && crypto.verify(null, data, key, Buffer.from(sig, 'base64'));
  });
}

// ---- the providers ---------------------------------------------------------
// Each returns { fixture, verify(body, headers) -> accepted? }. verify is
// the provider library's own verifier where it has one; for the documented
// schemes it is an implementation of the documentation, written apart from
// the signing code above it.

const PROVIDERS = {
  async stripe(now) {
    const secret = 'whsec_pB4kT9mQ2vX7cL1nR8wZ3yF6hD0jS5aG';
    const body = readSample('presets/stripe-invoice-paid.json');
    const stripe = new Stripe('sk_test_51NvQ4kLkdIwHu7ixFixturesOnlyNotAKey');
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: now });
    return {
      fixture: {
        checked_by: 'library',
        library: lib('stripe', 'webhooks.generateTestHeaderString({payload, secret, timestamp}) signs; webhooks.constructEvent(body, header, secret, 300, undefined, receivedAt) verifies'),
        doc: 'https://docs.stripe.com/webhooks#verify-manually',
        secret,
        sample: 'presets/stripe-invoice-paid.json',
        content_type: 'application/json; charset=utf-8',
        headers: { 'Stripe-Signature': header },
        body,
      },
      verify: (b, h) => stripe.webhooks.constructEvent(b, h['Stripe-Signature'], secret, 300, undefined, now * 1000),
    };
  },

  async mux(now) {
    const secret = 'u8dq3rkbn5t0vgm2lcoe9h7js1pa6fwx';
    const body = readSample('presets/mux-asset-ready.json');
    const header = `t=${now},v1=${hmac('sha256', secret, `${now}.${body}`, 'hex')}`;
    const mux = new Mux({ tokenId: 'fixture-token-id', tokenSecret: 'fixture-token-secret', webhookSecret: secret });
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('@mux/mux-node', 'webhooks.verifySignature(body, headers, secret) (what webhooks.unwrap calls) verifies; the library cannot sign'),
        doc: 'https://www.mux.com/docs/core/verify-webhook-signatures',
        secret,
        sample: 'presets/mux-asset-ready.json',
        content_type: 'application/json',
        headers: { 'Mux-Signature': header },
        body,
      },
      verify: (b, h) => atTime(now * 1000, async () => {
        await mux.webhooks.verifySignature(b, { 'mux-signature': h['Mux-Signature'] }, secret);
        return true;
      }),
    };
  },

  async replicate(now) {
    const secret = `whsec_${sha256('hookbox fixture: replicate signing secret').toString('base64')}`;
    const body = readSample('presets/replicate-prediction-succeeded.json');
    const id = 'msg_2ZcFtY3n8q1VxK7hJm4LwR9sBdE';
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = `v1,${hmac('sha256', key, `${id}.${now}.${body}`, 'base64')}`;
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('replicate', 'validateWebhook({id, timestamp, signature, body, secret}) verifies; the library cannot sign'),
        doc: 'https://replicate.com/docs/topics/webhooks/verify-webhook',
        secret,
        sample: 'presets/replicate-prediction-succeeded.json',
        content_type: 'application/json',
        headers: { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signature },
        body,
      },
      verify: (b, h) => replicatePkg.validateWebhook({
        id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'], body: b, secret,
      }),
    };
  },

  async standardwebhooks(now) {
    const secret = `whsec_${sha256('hookbox fixture: standard webhooks v1').subarray(0, 24).toString('base64')}`;
    const body = readSample('presets/standardwebhooks-video-transcode-completed.json');
    const id = 'msg_2ZcG0pR7wK3mX9tL5qB1nV8yHsJ';
    const wh = new StandardWebhook(secret);
    const signature = wh.sign(id, new Date(now * 1000), body);
    return {
      fixture: {
        checked_by: 'library',
        library: lib('standardwebhooks', 'new Webhook(secret).sign(id, date, body) signs; .verify(body, headers) verifies'),
        doc: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
        secret,
        sample: 'presets/standardwebhooks-video-transcode-completed.json',
        content_type: 'application/json',
        headers: { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': signature },
        body,
      },
      verify: (b, h) => atTime(now * 1000, () => {
        wh.verify(b, h);
        return true;
      }),
    };
  },

  async 'standardwebhooks-v1a'(now) {
    // The signer must reproduce the reference server's published v1a test
    // vector (svix-webhooks, worker.rs test_asymmetric_key_signing), which is
    // also the example signature of the specification.
    const ref = v1aKeysFromWhsk('whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==');
    const refSig = v1aSign(ref.privateKey, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    if (refSig !== 'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==') {
      throw new Error(`the Ed25519 signer does not reproduce the reference v1a vector: ${refSig}`);
    }
    const seed = sha256('hookbox fixture: standard webhooks v1a seed');
    const { privateKey, publicRaw } = ed25519FromSeed(seed);
    const secret = `whpk_${publicRaw.toString('base64')}`;
    const privateKeyText = `whsk_${Buffer.concat([seed, publicRaw]).toString('base64')}`;
    v1aKeysFromWhsk(privateKeyText); // the serialized pair must read back
    const body = readSample('presets/standardwebhooks-video-transcode-completed.json');
    const id = 'msg_2ZcG1sD4hN6bQ8vT0xM3kW7pRfY';
    return {
      fixture: {
        checked_by: 'documentation',
        library: `none: ${lib('standardwebhooks', 'implements v1 (HMAC-SHA256) only, no v1a')}; signed and verified with node:crypto Ed25519, the signer checked against the reference v1a test vector`,
        doc: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme',
        secret,
        private_key: privateKeyText,
        sample: 'presets/standardwebhooks-video-transcode-completed.json',
        content_type: 'application/json',
        headers: { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': v1aSign(privateKey, id, now, body) },
        body,
      },
      verify: (b, h) => v1aVerify(secret, h, b),
    };
  },

  async livepeer(now) {
    // Livepeer Studio signs the body alone; t (milliseconds) is not signed,
    // the body's own "timestamp" field carries the same value.
    const secret = '5d3c1a9e-8f2b-4e7d-a0c6-1b9f4e2d7a38';
    const body = readSample('presets/livepeer-asset-ready.json');
    const t = now * 1000;
    const header = `t=${t},v1=${hmac('sha256', secret, body, 'hex')}`;
    return {
      fixture: {
        checked_by: 'documentation',
        library: 'none: the livepeer npm SDK (checked 3.5.0) has no webhook signing or verification; signed per the documentation and the Livepeer Studio webhook sender (sign(body, sharedSecret), header t=Date.now())',
        doc: 'https://docs.livepeer.org/developers/guides/setup-and-listen-to-webhooks',
        secret,
        sample: 'presets/livepeer-asset-ready.json',
        content_type: 'application/json',
        headers: { 'Livepeer-Signature': header },
        body,
      },
      verify: (b, h) => {
        const parts = h['Livepeer-Signature'].split(',').map((p) => p.split('='));
        const sigs = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
        const expected = hmac('sha256', secret, b, 'hex');
        return sigs.some((s) => sameText(s, expected));
      },
    };
  },

  async 'cloudflare-stream'(now) {
    const secret = 'e4b1c7f09a2d6358b0f3a9c1d7e2468b';
    const body = readSample('presets/cloudflare-stream-video-ready.json');
    const header = `time=${now},sig1=${hmac('sha256', secret, `${now}.${body}`, 'hex')}`;
    return {
      fixture: {
        checked_by: 'documentation',
        library: 'none: the cloudflare npm package (API client) has no Stream webhook verification; signed per the documentation',
        doc: 'https://developers.cloudflare.com/stream/manage-video-library/using-webhooks/',
        secret,
        sample: 'presets/cloudflare-stream-video-ready.json',
        content_type: 'application/json',
        headers: { 'Webhook-Signature': header },
        body,
      },
      verify: (b, h) => {
        const parts = Object.fromEntries(h['Webhook-Signature'].split(',').map((p) => p.split('=')));
        return sameText(parts.sig1, hmac('sha256', secret, `${parts.time}.${b}`, 'hex'));
      },
    };
  },

  async apivideo() {
    const secret = 'sig_sec_7Hq2nV9xLc4tR8kZ1pW6sD';
    const body = readSample('presets/apivideo-video-encoding-quality-completed.json');
    return {
      fixture: {
        checked_by: 'documentation',
        library: 'none: @api.video/nodejs-client (checked 2.6.8) only returns the subscription\'s signatureSecret, it has no verify helper; signed per the documentation',
        doc: 'https://docs.api.video/reference/create-and-manage-webhooks',
        secret,
        sample: 'presets/apivideo-video-encoding-quality-completed.json',
        content_type: 'application/json',
        headers: {
          'X-Api-Video-WebhookID': 'webhook_1BWt3JArmQq9sNZzsHStRS',
          'X-Api-Video-Signature': hmac('sha256', secret, body, 'hex'),
        },
        body,
      },
      verify: (b, h) => sameText(h['X-Api-Video-Signature'], hmac('sha256', secret, b, 'hex')),
    };
  },

  async bitmovin() {
    const secret = 'bmw-7Hq2nV9xLc4tR8kZ1pW6sD3f';
    const body = readSample('presets/bitmovin-encoding-finished.json');
    return {
      fixture: {
        checked_by: 'documentation',
        library: 'none: @bitmovin/api-sdk (checked 1.267.0) only models WebhookSignature {type: HMAC, key} ("the SHA512 hashing algorithm is used to generate an authentication code from the webhook body", header Bitmovin-Signature), no verify function; hex encoding per Bitmovin\'s community answer',
        doc: 'https://community.bitmovin.com/t/webhook-validation/1731',
        secret,
        sample: 'presets/bitmovin-encoding-finished.json',
        content_type: 'application/json',
        headers: { 'Bitmovin-Signature': hmac('sha512', secret, body, 'hex') },
        body,
      },
      verify: (b, h) => sameText(h['Bitmovin-Signature'], hmac('sha512', secret, b, 'hex')),
    };
  },

  async cloudinary(now) {
    const cloudinary = cloudinaryPkg.v2;
    const secret = 'Qm8rT2vX9kLp4nZ7cW1yB5hJd3F';
    cloudinary.config({ cloud_name: 'northlight', api_key: '614335564976464', api_secret: secret, signature_algorithm: 'sha1' });
    const body = readSample('presets/cloudinary-upload.json');
    const signature = cloudinary.utils.webhook_signature(body, now, { api_secret: secret, signature_algorithm: 'sha1' });
    return {
      fixture: {
        checked_by: 'library',
        library: lib('cloudinary', 'v2.utils.webhook_signature(body, timestamp, {api_secret, signature_algorithm: "sha1"}) signs; v2.utils.verifyNotificationSignature(body, timestamp, signature, 7200) verifies'),
        doc: 'https://cloudinary.com/documentation/notification_signatures',
        secret,
        sample: 'presets/cloudinary-upload.json',
        content_type: 'application/json',
        headers: { 'X-Cld-Timestamp': String(now), 'X-Cld-Signature': signature },
        body,
      },
      verify: (b, h) => atTime(now * 1000, () =>
        cloudinary.utils.verifyNotificationSignature(b, Number(h['X-Cld-Timestamp']), h['X-Cld-Signature'], 7200)),
    };
  },

  // Not a preset: the worked example of hookbox(1), SIGNATURE SCHEMES,
  // whose mapping is tests/providers/sanity.json.
  async sanity(now) {
    const secret = 'k7Hq2vR9xLm4Tp8wZc3nBf6J';
    const body = readSample('tests/providers/sanity-video.json');
    const header = await sanitySign(body, now * 1000, secret);
    return {
      fixture: {
        checked_by: 'library',
        library: lib('@sanity/webhook', 'encodeSignatureHeader(body, ms, secret) signs; isValidSignature(body, header, secret) verifies'),
        doc: 'https://www.sanity.io/docs/webhooks',
        secret,
        sample: 'tests/providers/sanity-video.json',
        content_type: 'application/json',
        headers: { 'sanity-webhook-signature': header },
        body,
      },
      verify: (b, h) => sanityValid(b, h['sanity-webhook-signature'], secret),
    };
  },

  async github() {
    const secret = 'It6fHc9qRwK2mZ8xVb4nLs7dPe3y';
    const body = readSample('presets/github-release-published.json');
    const signature256 = await githubSign(secret, body);
    return {
      fixture: {
        checked_by: 'library',
        library: lib('@octokit/webhooks-methods', 'sign(secret, body) makes X-Hub-Signature-256; verify(secret, body, signature) verifies it. X-Hub-Signature (sha1=, legacy, still sent) is built per the documentation'),
        doc: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
        secret,
        sample: 'presets/github-release-published.json',
        content_type: 'application/json',
        headers: {
          'User-Agent': 'GitHub-Hookshot/7b5c1e2',
          'X-GitHub-Event': 'release',
          'X-GitHub-Delivery': '2f8a6c40-cf7e-11f1-8a3e-5d9b1c7e4f20',
          'X-GitHub-Hook-ID': '482913377',
          'X-GitHub-Hook-Installation-Target-ID': '716281934',
          'X-GitHub-Hook-Installation-Target-Type': 'repository',
          'X-Hub-Signature': `sha1=${hmac('sha1', secret, body, 'hex')}`,
          'X-Hub-Signature-256': signature256,
        },
        body,
      },
      verify: async (b, h) =>
        (await githubVerify(secret, b, h['X-Hub-Signature-256'])) &&
        sameText(h['X-Hub-Signature'], `sha1=${hmac('sha1', secret, b, 'hex')}`),
    };
  },

  async shopify() {
    const secret = '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';
    const body = readSample('presets/shopify-products-update.json');
    const url = urlFor('shopify');
    const shopify = shopifyApi({
      apiKey: '3a7c9e1b5d2f4a6c8e0b1d3f5a7c9e2b',
      apiSecretKey: secret,
      apiVersion: ApiVersion.January26,
      scopes: ['read_products'],
      hostName: 'hooks.example.com',
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error, log: () => {} },
    });
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('@shopify/shopify-api', 'webhooks.validate({rawBody, rawRequest, rawResponse}) (web-api adapter) verifies the HMAC and the required X-Shopify-* headers; the library cannot sign. (15.x needs node 22; 13.1.0 is the newest for node 20)'),
        doc: 'https://shopify.dev/docs/apps/build/webhooks/subscribe/https',
        secret,
        sample: 'presets/shopify-products-update.json',
        content_type: 'application/json',
        headers: {
          'X-Shopify-Topic': 'products/update',
          'X-Shopify-Hmac-Sha256': hmac('sha256', secret, body, 'base64'),
          'X-Shopify-Shop-Domain': 'northlight-media.myshopify.com',
          'X-Shopify-API-Version': '2026-01',
          'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
          'X-Shopify-Event-Id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
          'X-Shopify-Triggered-At': '2026-12-01T09:59:58.612744105Z',
        },
        body,
      },
      verify: async (b, h) => {
        const rawRequest = new Request(url, { method: 'POST', headers: { ...h, 'Content-Type': 'application/json' }, body: b });
        const r = await shopify.webhooks.validate({ rawBody: b, rawRequest, rawResponse: new Response() });
        return r.valid === true;
      },
    };
  },

  async slack(now) {
    const secret = 'a3f5c7e9b1d24680f1e3d5c7a9b0c2e4';
    const body = readSample('presets/slack-file-shared.json');
    const signature = `v0=${hmac('sha256', secret, `v0:${now}:${body}`, 'hex')}`;
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('@slack/bolt', 'verifySlackRequest({signingSecret, body, headers, nowMilliseconds}) verifies; the library cannot sign'),
        doc: 'https://docs.slack.dev/authentication/verifying-requests-from-slack',
        secret,
        sample: 'presets/slack-file-shared.json',
        content_type: 'application/json',
        headers: { 'X-Slack-Request-Timestamp': String(now), 'X-Slack-Signature': signature },
        body,
      },
      verify: (b, h) => {
        boltPkg.verifySlackRequest({
          signingSecret: secret,
          body: b,
          headers: {
            'x-slack-signature': h['X-Slack-Signature'],
            'x-slack-request-timestamp': Number(h['X-Slack-Request-Timestamp']),
          },
          nowMilliseconds: now * 1000,
        });
        return true;
      },
    };
  },

  async zoom(now) {
    const secret = 'kA9vR3xQ7mT2pL8wZ5nC1b';
    const body = readSample('presets/zoom-recording-completed.json');
    if (JSON.stringify(JSON.parse(body)) !== body) {
      throw new Error('the zoom sample must be compact JSON that JSON.stringify reproduces (Rivet re-serializes the body)');
    }
    const signature = `v0=${hmac('sha256', secret, `v0:${now}:${body}`, 'hex')}`;
    const handler = new ZoomLambdaReceiver({ webhooksSecretToken: secret }).start();
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('@zoom/rivet', 'meetings AwsLambdaReceiver({webhooksSecretToken}).start()(event) answers 200 when CommonHttpRequest.isEventVerified() holds; it hashes JSON.stringify(JSON.parse(body)), not the raw bytes; the library cannot sign'),
        doc: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
        secret,
        sample: 'presets/zoom-recording-completed.json',
        content_type: 'application/json; charset=utf-8',
        headers: { 'x-zm-request-timestamp': String(now), 'x-zm-signature': signature },
        body,
      },
      verify: async (b, h) => {
        const debug = console.debug;
        console.debug = () => {};
        try {
          const r = await handler({ body: b, headers: { ...h }, isBase64Encoded: false }, {});
          return r.statusCode === 200;
        } finally {
          console.debug = debug;
        }
      },
    };
  },

  async square() {
    const secret = 'Zq4Lm8Tv2Rx6Nb0Wc3Yk7P';
    const body = readSample('presets/square-payment-updated.json');
    const url = urlFor('square');
    return {
      fixture: {
        checked_by: 'library-verify',
        library: lib('square', 'WebhooksHelper.verifySignature({requestBody, signatureHeader, signatureKey, notificationUrl}) verifies; the library cannot sign'),
        doc: 'https://developer.squareup.com/docs/webhooks/step3validate',
        secret,
        sample: 'presets/square-payment-updated.json',
        content_type: 'application/json',
        headers: { 'x-square-hmacsha256-signature': hmac('sha256', secret, url + body, 'base64') },
        body,
      },
      verify: (b, h) => squarePkg.WebhooksHelper.verifySignature({
        requestBody: b, signatureHeader: h['x-square-hmacsha256-signature'], signatureKey: secret, notificationUrl: url,
      }),
    };
  },

  async twilio() {
    const secret = 'b7e2c9d4f1a8630e5d2b7c4a9f1e6d38';
    const body = readSample('presets/twilio-composition-available.form');
    const url = urlFor('twilio');
    const params = (b) => {
      const p = {};
      for (const [k, v] of new URLSearchParams(b)) p[k] = k in p ? [].concat(p[k], v) : v;
      return p;
    };
    return {
      fixture: {
        checked_by: 'library',
        library: lib('twilio', 'getExpectedTwilioSignature(authToken, url, params) signs; validateRequest(authToken, signature, url, params) verifies'),
        doc: 'https://www.twilio.com/docs/usage/webhooks/webhooks-security',
        secret,
        sample: 'presets/twilio-composition-available.form',
        content_type: 'application/x-www-form-urlencoded',
        headers: {
          'I-Twilio-Idempotency-Token': '4a7d2f91-6c3e-4b58-9e0a-1f5c8d2b7e63',
          'X-Twilio-Signature': twilio.getExpectedTwilioSignature(secret, url, params(body)),
        },
        body,
      },
      verify: (b, h) => twilio.validateRequest(secret, h['X-Twilio-Signature'], url, params(b)),
    };
  },
};

// ---- main ------------------------------------------------------------------

const FIELD_ORDER = ['provider', 'checked_by', 'library', 'doc', 'secret', 'private_key', 'url', 'now', 'sample', 'content_type', 'headers', 'body'];

async function main() {
  const { now, out } = parseArgs(process.argv.slice(2));
  mkdirSync(out, { recursive: true });
  const failed = [];
  for (const [provider, make] of Object.entries(PROVIDERS)) {
    try {
      const { fixture, verify } = await make(now);
      const full = { provider, url: urlFor(provider), now, ...fixture };
      const ordered = {};
      for (const k of FIELD_ORDER) if (full[k] !== undefined) ordered[k] = full[k];

      const headers = ordered.headers;
      if (!(await accepts(() => verify(ordered.body, { ...headers })))) {
        throw new Error('its verifier rejects the fixture');
      }
      const changed = mutate(ordered.body, ordered.content_type);
      if (changed === ordered.body || Buffer.byteLength(changed) !== Buffer.byteLength(ordered.body)) {
        throw new Error('could not change one body byte');
      }
      if (await accepts(() => verify(changed, { ...headers }))) {
        throw new Error('its verifier accepts the body with one byte changed');
      }
      writeFileSync(join(out, `${provider}.json`), `${JSON.stringify(ordered, null, 2)}\n`);
      process.stdout.write(`${provider}: ${ordered.checked_by}\n`);
    } catch (err) {
      failed.push(provider);
      process.stderr.write(`make-fixtures: ${provider}: ${err.message}\n`);
    }
  }
  if (failed.length) {
    process.stderr.write(`make-fixtures: FAILED: ${failed.join(', ')}\n`);
    process.exit(1);
  }
}

await main();
