// Present only the file tools, and remind the model of the data policy.
// The TypeScript twin of policy.py. ADF runs this file as a script body, not a module: it calls
// the top-level function that agent.json names (`transform`) with {request, loop} and sends the
// request it returns, whole, in place of the original.

interface Tool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

interface Request {
  system: string;
  messages: unknown[];
  tools: Tool[];
  options?: Record<string, unknown>;
}

const ALLOWED_TOOLS = new Set(['fs_read', 'fs_write']);
const REMINDER = 'Never copy customer data into tool arguments.';

function transform(input: { request: Request; loop: { name: string } }): Request {
  const { request } = input;
  return {
    ...request,
    system: `${request.system}\n\n${REMINDER}`,
    tools: request.tools.filter((tool) => ALLOWED_TOOLS.has(tool.name)),
  };
}
