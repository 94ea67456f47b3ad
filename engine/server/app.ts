import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../errors.js';
import type { Store } from '../store/types.js';
import { AuthCache, authenticate, withGrants } from './auth.js';
import { answerClientError } from './client-error.js';
import './context.js';
import { discardBody } from './discard-body.js';
import { corsOptions, type CorsOrigins } from './cors.js';
import { sendError } from './envelope.js';
import { requirePermission } from './permissions.js';
import { RateLimiter, bucketFor, type RateLimiterOptions } from './rate-limit.js';
import { adminRoutes } from './routes/admin.js';
import { agentRoutes } from './routes/agent.js';
import { keySelfRoutes } from './routes/key-self.js';
import { mcpRoutes } from './routes/mcp.js';
import { fileRoutes } from './routes/files.js';
import { healthRoutes } from './routes/health.js';
import { recordRoutes } from './routes/records.js';
import { roleRoutes } from './routes/roles.js';
import { schemaRoutes } from './routes/schema.js';
import { searchRoutes } from './routes/search.js';
import { sourceRoutes } from './routes/sources.js';
import { studioRoutes, type StudioOptions } from './studio.js';
import { parseJsonBody } from './json-body.js';
import { openapiOptions } from './openapi.js';
import { openapiSchema } from './schemas/admin.js';
import { isUuid } from '../model/ids.js';
import { validatorCompiler } from './validation.js';

export interface CreateServerOptions {
  store: Store;
  /** false (default): silent; true or pino options: one JSON line per request with its id. */
  logger?: FastifyServerOptions['logger'];
  /** On by default, mirroring the hosted limits (contract.md §3); false turns it off; an object tunes it (tests). */
  rateLimit?: boolean | RateLimiterOptions;
  /** Clock for the rate-limit windows and remembered authentications (tests). */
  now?: () => number;
  /** Largest accepted request body in bytes (413 PAYLOAD_TOO_LARGE beyond). */
  bodyLimit?: number;
  /** Longest a request may take to arrive, in ms (408 SCHEMA_TIMEOUT beyond); and how often that is checked (tests). */
  requestTimeout?: { ms: number; checkEveryMs?: number };
  /** `serve --mcp-writes`: POST /v1/mcp may offer write tools to keys that may write records (contract.md §6). */
  mcpWrites?: boolean;
  /** Studio, the admin page at /_/ (contract.md §9): off unless given (serve and dev turn it on). */
  studio?: false | StudioOptions;
  /** Origins whose pages may call the server (cors.ts); default: http://localhost and http://127.0.0.1, any port. */
  cors?: CorsOrigins;
}

/**
 * Node's own default (5 minutes), which Fastify turns off: a client that trickles a request
 * in byte by byte cannot hold a connection for ever, while a 25 MB upload still has time
 * over a slow link.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

/** A bulk write of 1000 records with a few fields each fits comfortably. */
const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024;

/** Longest an over-limit body is read (and thrown away) so its sender sees the 413. */
const DISCARD_MS = 5_000;

/**
 * Longest path parameter the router matches (find-my-way counts decoded UTF-16 units).
 * Fastify's default of 100 refused longer ones before the route could, while the route
 * schemas allow 200 characters: this sits far above that (even 200 astral characters are
 * 400 units, 2,400 percent-encoded), so the route's own 400/404 answers; beyond it a 414.
 * Node's 16 KB header limit bounds the URL anyway.
 */
const MAX_PARAM_LENGTH = 4096;

/**
 * The local server's Fastify app, every route under /v1, NOT listening
 * (architecture.md pattern 9: only the command listens; tests pick port 0).
 */
export async function createServer(options: CreateServerOptions): Promise<FastifyInstance> {
  const { store } = options;
  let closing = false;
  // What the onRequest/onSend/onResponse hooks do for every answer, for the answers that
  // bypass them (frameworkErrors has no route context, so none of its hooks run).
  const stamp = (request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
  };
  // One log line per request (issue 3), whichever way it was answered.
  const logLine = (request: FastifyRequest, reply: FastifyReply): void => {
    request.log.info(
      { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  };
  const app = Fastify({
    logger: options.logger ?? false,
    // One log line per request (issue 3), written by logLine below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    // contract.md §3: a syntactically valid client UUID is echoed, anything else replaced.
    requestIdHeader: false,
    genReqId: (req: IncomingMessage) => {
      const sent = req.headers['x-request-id'];
      return isUuid(sent) ? sent : randomUUID();
    },
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestTimeout: options.requestTimeout?.ms ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ...(options.requestTimeout?.checkEveryMs ? { http: { connectionsCheckingInterval: options.requestTimeout.checkEveryMs } } : {}),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Our JSON parser (json-body.ts) refuses these keys with a reasoned 400; kept strict
    // here too for any parser that falls back to Fastify's.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Errors Fastify raises before routing (a malformed URL, a path segment past
    // MAX_PARAM_LENGTH) still get the envelope, the id and the log line.
    frameworkErrors: (error, request, reply) => {
      stamp(request, reply);
      if (options.logger) reply.raw.once('finish', () => logLine(request, reply));
      sendError(error, request, reply);
    },
    // Requests Node's HTTP parser refuses never reach Fastify: client-error.ts answers them.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, app.log),
  });
  // Headers are part of the request. Node swaps the two limits when headersTimeout (60 s) is
  // the longer, so a requestTimeout under 60 s would bound the whole request by 60 s.
  app.server.headersTimeout = Math.min(app.server.headersTimeout, app.server.requestTimeout || Infinity);

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the answers (openapi.json); bodies are written with plain
  // JSON.stringify so a free-form record mapping is never trimmed by a serializer.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.decorateRequest('actor', null);
  // Before the hooks below: a preflight carries no key (browsers never send one), so it is
  // answered here, ahead of authentication (contract.md §3 "CORS").
  await app.register(cors, corsOptions(options.cors));
  const authCache = new AuthCache(options.now);
  const limiter =
    options.rateLimit === false
      ? null
      : new RateLimiter({
          ...(typeof options.rateLimit === 'object' ? options.rateLimit : {}),
          ...(options.now ? { now: options.now } : {}),
          ...(store.rateCounter ? { counter: store.rateCounter } : {}),
        });

  // Order matters: the id first (so every later failure carries it), then the rate limit
  // (unauthenticated floods count too), then the key, then the route's permission —
  // all before the body is parsed, so a refused caller learns nothing about validation.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const route = request.routeOptions.url;
    if (limiter) {
      const bucket = bucketFor(request.method, route);
      // The memory counter answers at once: no promise per request on the SQLite path.
      const counted = bucket ? limiter.hit(bucket, request.ip) : undefined;
      if (counted) await counted;
    }
    if (route === undefined) return; // unknown route: the 404 handler answers
    const config = request.routeOptions.config;
    if (config.public) return;
    const actor = await withGrants(await authenticate(request, store, authCache), store);
    request.actor = actor;
    const object = (request.params as { objectName?: string } | undefined)?.objectName;
    if (config.action) requirePermission(actor, config.action, { object, record: config.record });
  });

  // Graceful stop (issue 3): in-flight requests finish, and their answers tell keep-alive
  // clients to go, so close() does not wait out the keep-alive timeout.
  app.addHook('preClose', async () => {
    closing = true;
    // A keep-alive socket whose response was still finishing when close() swept the idle
    // ones is missed by that sweep and would hold close() for the whole keep-alive
    // timeout (72 s): sweep again until the listener has really closed.
    const server = app.server;
    if (!server.listening) return;
    const sweep = setInterval(() => server.closeIdleConnections(), 25);
    sweep.unref();
    server.once('close', () => clearInterval(sweep));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    stamp(request, reply);
    done(null, payload);
  });

  if (options.logger) {
    // Not even registered when silent.
    app.addHook('onResponse', (request, reply, done) => {
      logLine(request, reply);
      done();
    });
  }

  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  app.setErrorHandler(async (error, request, reply) => {
    // A 413 is decided before the body is read: read the rest (bounded) before answering,
    // so the client can finish sending and sees the envelope, not a reset (discard-body.ts).
    if ((error as { statusCode?: unknown }).statusCode === 413) {
      await discardBody(request.raw, { maxBytes: 2 * bodyLimit, maxMs: DISCARD_MS });
    }
    return sendError(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(new ServiceError('ROUTE_NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`), request, reply),
  );

  await app.register(swagger, openapiOptions);

  await app.register(
    async (v1) => {
      const deps = { store, authCache };
      await v1.register(healthRoutes);
      await v1.register(schemaRoutes, deps);
      await v1.register(sourceRoutes, deps);
      await v1.register(recordRoutes, deps);
      await v1.register(searchRoutes, deps);
      await v1.register(adminRoutes, deps);
      await v1.register(roleRoutes, deps);
      // Files and documents (issue 5); multipart parsing is registered inside, for these routes only.
      await v1.register(fileRoutes, deps);
      await v1.register(keySelfRoutes, deps);
      // The agent routes (AI bucket, 503 CONFIGURATION_REQUIRED) and MCP over HTTP (issue 18).
      await v1.register(agentRoutes);
      await v1.register(mcpRoutes, { writes: options.mcpWrites === true });
      v1.get(
        '/openapi.json',
        { schema: openapiSchema, config: { public: true } },
        async () => app.swagger(),
      );
    },
    { prefix: '/v1' },
  );
  if (options.studio) await app.register(studioRoutes, options.studio);

  return app;
}

