import { describe, expectTypeOf, it } from 'vitest';
import type { PushAnswer as WireAnswer, PushChoices } from '../../engine/plan/push.js';
import type { AllowDestructive, Plan } from '../../engine/plan/types.js';
import type { PushAnswer, PushOptions } from '../../engine/sdk/index.js';
import type { PushOptions as StorePushOptions, PushResult } from '../../engine/store/types.js';

/**
 * The push's wire types have one definition (engine/plan/push.ts); the SDK's public types
 * (`schemasync/sdk`) keep their shape. Checked by the type checker (`npm run lint`).
 */
describe('push wire types', () => {
  it('the SDK, the store and the server share one definition, and the SDK\'s public shape is unchanged', () => {
    expectTypeOf<PushOptions>().toEqualTypeOf<PushChoices>();
    expectTypeOf<PushAnswer>().toEqualTypeOf<WireAnswer>();
    expectTypeOf<PushResult>().toEqualTypeOf<WireAnswer>();
    expectTypeOf<StorePushOptions>().toExtend<PushChoices>();
    expectTypeOf<PushOptions>().toEqualTypeOf<{ dryRun?: boolean; allowDestructive?: AllowDestructive; ifMatch?: number; expectPlan?: string }>();
    expectTypeOf<PushAnswer>().toEqualTypeOf<{ version: number; applied: boolean; plan: Plan }>();
  });
});
