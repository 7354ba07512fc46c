// Hooks that fail, one per kind of failure met most often: the TypeScript twins of failing.py,
// each the same small, realistic mistake. Run one against its sample and read the turn error,
// e.g. from the repository root:
//
//   hook-studio run resources/sample-workspace --sample support-ticket \
//       --hook lib/failing.ts:typoKey
//
// The README next to this folder lists each hook, its sample and the turn error kind it ends in.
//
// The pre-LLM hooks follow ADF's rules: ADF runs the file as a script body and calls the named
// top-level function. The step and chain hooks are module exports, as Crux and Pleach call them
// (ADF drops the word `export`, so both kinds can share a file). Since ADF can import only Node's
// built-ins, a top-level `import ... from '@use-crux/core'` here would fail every pre-LLM hook in
// the file; the step hook imports it where it runs instead.

interface Message {
  role: string;
  content: unknown;
}

// ---- pre-LLM hooks (sample support-ticket) ----------------------------------------------------

interface MistypedRequest {
  system: string;
  message: Message[];
}

// exception: the request has `messages`; the interface says `message`, and nothing checks types.
function typoKey(input: { request: MistypedRequest }) {
  const { request } = input;
  const last = request.message.at(-1);
  return { ...request, system: `${request.system}\n\nLast turn by ${last?.role}.` };
}

interface Request {
  system: string;
  messages: Message[];
}

// invalid_result: a tool result is the user's turn, never the assistant's.
function toolResultFromAssistant(input: { request: Request }) {
  const { request } = input;
  const note: Message = {
    role: 'assistant',
    content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'log already checked' }],
  };
  return { ...request, messages: [...request.messages, note] };
}

// invalid_result at /request: returns {request, loop} instead of the request itself.
function returnsWholePayload(input: { request: Request; loop: { name: string } }) {
  input.request.system += "\n\nAnswer in the customer's language.";
  return input;
}

// timeout: an 8 s call, past the 5000 ms timeout_ms of agent.json.
async function slowLookup(input: { request: Request }) {
  await new Promise((resolve) => setTimeout(resolve, 8000));
  return input.request;
}

// ---- step preparation (sample step-escalated) -------------------------------------------------

// invalid_composition (V9): "escalateTicket" is no tool of the resolved graph.
export function activateUnknownTool(_ctx: unknown) {
  return { activeTools: ['searchKnowledge', 'escalateTicket'] };
}

interface StepContext {
  resources: { read(handle: unknown): Promise<unknown> };
}

interface EscalationQueue {
  priority?: string;
}

// resource_read (undeclared): the sample declares working-state:support-control only.
export async function readUndeclaredResource(ctx: StepContext) {
  const { workingState } = await import('@use-crux/core');
  const handle = workingState('escalation-queue');
  const queue = (await ctx.resources.read(handle)) as EscalationQueue | null;
  if (queue?.priority === 'high') {
    return { model: 'review-model' };
  }
  return undefined;
}

// ---- model hook chain (sample chain-refund) ---------------------------------------------------

// invalid_result: the result key is systemPromptSuffix.
export function misspeltSuffix(_ctx: unknown) {
  return { systemPromptSufix: 'Quote the refund policy before promising anything.' };
}
