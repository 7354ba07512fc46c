// Model hook chain: a policy suffix before the call, and a check on the answer after it.
// The TypeScript twin of chain_hooks.py.

interface Message {
  role: string;
  content?: unknown;
}

export function policySuffix(_ctx: unknown) {
  return { systemPromptSuffix: 'Refunds above 500 EUR need a second approver.' };
}

export function routeSmallTalk(ctx: { messages: Message[] }) {
  const last = ctx.messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content.trim().toLowerCase() : null;
  if (text === 'hi' || text === 'hello') {
    const greeting = { role: 'assistant', content: 'Hello! How can I help with your order?' };
    return { shortCircuit: greeting };
  }
  return undefined;
}

export function noRefundPromises(ctx: { response: Message }) {
  const text = ctx.response.content ?? '';
  if (typeof text === 'string' && text.toLowerCase().includes('guarantee')) {
    return { retry: { feedback: 'Do not guarantee refunds; say what you will check instead.' } };
  }
  return undefined;
}
