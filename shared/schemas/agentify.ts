import { z } from 'zod';
import { idSchema, timestamp } from './fields.js';

/** `GET /v1/agentify/markdown?url=…`: a page of one of the organization's sellers' sites. */
export const agentifyInput = z.object({
  url: z
    .string()
    .max(2000, 'must be at most 2000 characters')
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
      } catch {
        return false;
      }
    }, 'must be an absolute http(s) URL without credentials')
    .meta({
      description: 'The page, on an upstream host or custom hostname of one of the organization’s sellers',
      example: 'https://docs.example.com/guide/getting-started',
    }),
});

export const agentifiedPage = z.object({
  url: z.string().meta({ description: 'Where the page was read, after redirects (fragment dropped)' }),
  seller: idSchema('seller').meta({ description: 'The seller that owns the host' }),
  title: z.string().nullable(),
  byline: z.string().nullable(),
  excerpt: z.string().nullable().meta({ description: 'A short summary: the page’s description or its first paragraph' }),
  lang: z.string().nullable(),
  markdown: z.string().meta({ description: 'The main content as GitHub-flavoured markdown, links absolute' }),
  fetchedAt: timestamp,
});
export type AgentifiedPage = z.infer<typeof agentifiedPage>;
