import { describe, expect, it } from 'vitest';
import { refusal } from '../../engine/plan/refusal.js';
import type { Plan, Step } from '../../engine/plan/types.js';
import { planPayload } from '../../engine/mcp/plan.js';
import { createRunner, type LoopEvent } from '../../engine/watch/loop.js';
import { makeColors } from '../../cli/context.js';
import { renderPlanText } from '../../cli/render/plan.js';

/**
 * How to allow a plan's losses is said in one sentence, derived from the dry run's plan in one
 * place (engine/plan/approval.ts): SCHEMA_DESTRUCTIVE_NOT_ALLOWED is a masked 500 (contract.md
 * §3), so its `fix` cannot travel over HTTP and each client derives it. The engine's refusal,
 * the CLI's plan text, MCP's plan_sync and the watch loop's held-back command must agree.
 */
const plan = (steps: Partial<Step>[]): Plan => ({
  source: 'crm',
  baseVersion: 1,
  planHash: 'h',
  steps: steps as Step[],
  conflicts: [],
  summary: { create: 0, change: 0, drop: steps.length, destructive: steps.filter((s) => s.destructive).length, conflicts: 0 },
});

const lossy = plan([
  { action: 'drop_attribute', target: 'deal.a', destructive: true, affected: 2 },
  { action: 'add_attribute', target: 'deal.n', destructive: false, object: 'deal', attribute: 'n', spec: { name: 'n', type: 'text' } } as Partial<Step>,
  { action: 'drop_object', target: 'legacy', destructive: true, affected: 5 },
]);

async function heldCommand(allow: boolean | string[]): Promise<string | undefined> {
  const events: LoopEvent[] = [];
  const r = createRunner({
    load: async () => ({ source: 'crm', schema: 'schema', declaration: { objects: {}, views: {} }, diagnostics: [] }),
    push: async (_s, _d, call) => {
      if (!call.dryRun) throw Object.assign(new Error('Internal server error'), { status: 500, code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED' });
      return { version: 1, applied: false, plan: lossy };
    },
    emit: (e) => events.push(e),
    syncCommand: 'schemasync sync',
    allowDestructive: allow,
  });
  await r.runOnce();
  const held = events.find((e) => e.type === 'held');
  return held?.type === 'held' ? held.command : undefined;
}

describe('allowing a loss: one sentence everywhere', () => {
  it('the refusal\'s fix is the line plan and sync print, and MCP\'s plan_sync says it too', () => {
    const fix = refusal(lossy, { currentVersion: 1 })?.details.fix;
    expect(fix).toBe('Destructive steps need --allow-destructive (all) or --allow-destructive deal.a,legacy');
    const text = renderPlanText(lossy, makeColors(false));
    expect(text.split('\n')).toContain(fix);
    expect(String(planPayload('crm', { version: 1, applied: false, plan: lossy }).next)).toContain(fix!);
  });

  it('watch names every loss in the command, not only the ones its own --allow-destructive leaves out (an allow list replaces the previous one)', async () => {
    expect(await heldCommand(false)).toBe('schemasync sync --allow-destructive deal.a,legacy');
    // with deal.a allowed, `sync --allow-destructive legacy` would refuse deal.a: name both
    expect(await heldCommand(['deal.a'])).toBe('schemasync sync --allow-destructive deal.a,legacy');
  });
});
