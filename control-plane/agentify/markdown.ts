import { z } from 'zod';
import { agentifiedPage, agentifyInput } from '../../shared/schemas/agentify.js';
import { apiKeyProcedure } from '../trpc/procedures.js';

/** `GET /v1/agentify/markdown` (spec: Agentify, parameters and response ours: docs/decisions.md › Agentify). */
export const agentifyMarkdownRoute = apiKeyProcedure('agentify:convert')
  .meta({
    openapi: {
      method: 'GET',
      path: '/v1/agentify/markdown',
      tags: ['Agentify'],
      summary: 'A page of a seller’s site as markdown for agents',
      description:
        'Fetches `url` from a host the organization’s sellers own (an upstream host at its scheme and port, or a custom hostname over http on 80 or https on 443), follows redirects only on the host asked for, extracts the main content and answers it as markdown with its title. Pages up to 5 MiB, fetched within 10 s; 60 requests a minute per organization.',
    },
    errors: ['page_host_not_owned', 'page_unreachable', 'page_not_html', 'page_too_large', 'rate_limited', 'service_unavailable'],
  })
  .input(agentifyInput)
  .output(z.object({ page: agentifiedPage }))
  .query(async ({ ctx, input }) => ({ page: await ctx.agentify.markdown(ctx.db, ctx.actor.organizationId, new URL(input.url)) }));
