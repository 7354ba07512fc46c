// Invocation preparation: decides each child's baseline once, before the child runs.
// The TypeScript twin of invocation.py; `prepareInvocation` is the hook hookstudio.json runs.

import { workingState } from '@use-crux/core';

interface InvocationContext {
  composition: { id: string; kind: 'pipeline' | 'parallel' | 'consensus' | 'swarm' };
  step?: { name: string; index: number };
  branch?: { name: string; index: number };
  candidate?: { index: number };
  hop?: { index: number; path: readonly string[]; fromAgent?: string; reason?: string };
  resources: { read(handle: unknown): Promise<unknown> };
}

interface RoutingPolicy {
  candidateModels?: readonly string[];
}

export async function prepareInvocation(ctx: InvocationContext) {
  switch (ctx.composition.kind) {
    case 'pipeline':
      // The review stage writes with the review model and its rubric; other stages inherit.
      if (ctx.step?.name === 'review') {
        return { model: 'review-model', use: { add: [{ id: 'review-rubric', kind: 'context' }] } };
      }
      return undefined;
    case 'parallel':
      // Each branch works with its own tool only; lookupOrder is the invocation's own tool.
      return { activeTools: ctx.branch?.name === 'billing' ? ['lookupOrder'] : ['searchKnowledge'] };
    case 'consensus': {
      // Each candidate answers with another model, as the routing policy lists them.
      const policy = ((await ctx.resources.read(workingState('routing-policy'))) ?? {}) as RoutingPolicy;
      const models = policy.candidateModels ?? [];
      const index = ctx.candidate?.index ?? 0;
      if (index >= models.length) {
        throw new Error(`the routing policy names no model for candidate ${index}`);
      }
      return { model: models[index] };
    }
    case 'swarm':
      // Triage has already decided about refunds: the next agent does without the refund desk.
      if (ctx.hop?.fromAgent === 'triage') return { use: { remove: [{ id: 'refund-desk' }] } };
      return undefined;
  }
}

interface StepContext {
  toolHistory: readonly { callId: string; name: string; result?: unknown }[];
}

// A step hook for the child: once an order has been looked up, offer the refund tool.
export function refundStep(ctx: StepContext) {
  if (ctx.toolHistory.some((call) => call.name === 'lookupOrder' && 'result' in call)) {
    return { activeTools: ['lookupOrder', 'issueRefund'] };
  }
  return undefined;
}
