import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../../errors.js';
import { agentChatSchema, agentStreamSchema } from '../schemas/admin.js';

/**
 * The spec's agent chat and streaming routes (contract.md §3 "Also served"). The local
 * server has no agent wired, so both answer 503 CONFIGURATION_REQUIRED — "an optional
 * capability is not wired on this deployment. Permanent." — which clients must not retry
 * (the SDK's NO_RETRY_CODES). They count in the AI bucket (5 a minute, rate-limit.ts
 * `bucketFor`), before the key is even looked at, and need a key like every non-public route.
 */
export async function agentRoutes(app: FastifyInstance): Promise<void> {
  const notWired = async (): Promise<never> => {
    throw new ServiceError('CONFIGURATION_REQUIRED', 'No agent is configured on this server');
  };
  // Refused before the body is validated: whatever was sent, the capability is missing.
  app.post('/agent/chat', { schema: agentChatSchema, preValidation: notWired }, notWired);
  app.get('/agent/stream', { schema: agentStreamSchema, preValidation: notWired }, notWired);
}
