// Fetch context for the customer's question before the model answers (retrieval-augmented
// generation), through the agent's own tools: `adf.kb_search` finds help-centre articles and
// `adf.model_invoke` condenses the ticket into one line. The audit note is best effort: a hook
// must not fail the turn because an optional tool is missing.
//
// ADF runs this file as a script body; `adf` is its global. Run it in the studio with
// `--hook lib/context.ts:withTicketContext` on the sample `support-ticket-context`, whose
// `adf.replies` answer the two tool calls.

declare const adf: any;

interface Block {
  type: string;
  text?: string;
  content?: unknown;
}

interface Message {
  role: string;
  content: string | Block[];
}

interface Request {
  system: string;
  messages: Message[];
  tools: unknown[];
  options?: Record<string, unknown>;
}

interface Article {
  title: string;
  snippet: string;
}

function firstQuestion(messages: Message[]): string {
  const first = messages.find((message) => message.role === 'user');
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return first.content.map((block) => block.text ?? '').join(' ').trim();
}

async function withTicketContext(input: { request: Request; loop: { name: string } }) {
  const { request } = input;
  const question = firstQuestion(request.messages);
  const found: { results: Article[] } = await adf.kb_search({ query: question, limit: 2 });
  const summary: string = await adf.model_invoke({
    messages: [{ role: 'user', content: `Summarise this support ticket in one line: ${question}` }],
    max_tokens: 60,
  });
  try {
    await adf.audit_note({ loop: input.loop.name, articles: found.results.length });
  } catch (err: any) {
    console.warn(`audit note skipped (${err.code})`);
  }
  const articles = found.results.map((a) => `- ${a.title}: ${a.snippet}`).join('\n');
  return {
    ...request,
    system: `${request.system}\n\nTicket: ${summary.trim()}\nRelevant articles:\n${articles}`,
  };
}
