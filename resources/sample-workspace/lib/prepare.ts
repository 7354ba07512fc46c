// Step preparation: escalate to the review model when the support state says so.
// The TypeScript twin of prepare.py, and the step hook that hookstudio.json runs.

import { workingState } from '@use-crux/core';

interface StepContext {
  reason: 'initial' | 'tool-result' | 'validation-retry';
  toolHistory: readonly { callId: string; name: string; result?: unknown }[];
  resources: { read(handle: unknown): Promise<unknown> };
}

interface SupportControl {
  escalated?: boolean;
}

export async function prepareStep(ctx: StepContext) {
  const stored = await ctx.resources.read(workingState('support-control'));
  const control = (stored ?? {}) as SupportControl;
  if (control.escalated || ctx.reason === 'validation-retry') {
    return {
      model: 'review-model',
      use: { add: [{ id: 'review-checklist', kind: 'context' }] },
      inputBudget: { max: 24000 },
    };
  }
  if (ctx.toolHistory.length >= 3) {
    return { activeTools: ['searchKnowledge'] };
  }
  return undefined;
}
