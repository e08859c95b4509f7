import { z } from 'zod';

/** The pay URL's answer to a sandbox drive, as the sandbox routes return it. */
export const agentExchange = z
  .object({
    status: z.int(),
    headers: z.record(z.string(), z.string()).meta({ description: 'The billing and payment headers of the answer, and its content type' }),
    body: z.string().meta({ description: 'The body as text, cut to 16,384 characters' }),
    paid: z
      .object({
        paymentId: z.string().nullable().meta({ description: 'The payment hub named in its challenge, for /v1/sandbox/payments' }),
        network: z.string(),
        amount: z.string(),
        payTo: z.string(),
      })
      .nullable()
      .meta({ description: 'The x402 payment the agent signed for the 402 it met, or null when it met none' }),
  })
  .meta({ id: 'SandboxExchange' });
