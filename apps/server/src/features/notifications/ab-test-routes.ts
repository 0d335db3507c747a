import { abTestPerformance, abWinnerBody, envelope, idParam } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import { ok } from '../../platform/responses';
import { pickAbWinner } from './ab-test';

/** The owner's pick of an A/B test's winner (docs/product.md, "A/B tests"). */
export function abTestRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireUser(ctx));
    app.post(
      '/notifications/:id/ab-test/winner',
      {
        schema: {
          tags: ['notifications'],
          summary: 'Send this variant to the rest: pick the winner of an A/B test by hand',
          description:
            'Only for an A/B test on a sample whose sample has finished sending and whose winner is not decided yet (409 otherwise). The decision is made once: the rest of the audience gets `variant_index` (0 = A). Editor role.',
          params: idParam,
          body: abWinnerBody,
          response: { 200: envelope(z.object({ ab_test: abTestPerformance })) },
        },
      },
      async (request) => ok({ ab_test: await pickAbWinner(ctx, currentUser(request).id, request.params.id, request.body.variant_index) }),
    );
  };
}
