// Reads UI message streams with the Vercel AI SDK's own parser (package `ai`): for each URL on stdin (one per
// line), POSTs to it, parses the body with parseJsonEventStream + uiMessageChunkSchema, folds the chunks with
// readUIMessageStream, and prints one JSON line: the final UIMessage, the finish chunk's finishReason, the error
// chunks' texts, the response's status and x-vercel-ai-ui-message-stream header, and any parse failure.
import { createInterface } from 'node:readline';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

async function read(url) {
  const out = { message: null, finishReason: null, errors: [], status: null, header: null, failure: null };
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"messages":[]}' });
    out.status = response.status;
    out.header = response.headers.get('x-vercel-ai-ui-message-stream');
    const parsed = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema() });
    const chunks = parsed.pipeThrough(new TransformStream({
      transform(result, controller) {
        if (!result.success) { controller.error(result.error); return; }
        const chunk = result.value;
        if (chunk.type === 'finish') out.finishReason = chunk.finishReason ?? null;
        if (chunk.type === 'error') out.errors.push(chunk.errorText);
        controller.enqueue(chunk);
      },
    }));
    for await (const message of readUIMessageStream({ stream: chunks, onError: (e) => out.errors.push(String(e)) })) {
      out.message = message;
    }
  } catch (e) {
    out.failure = String(e);
  }
  return out;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim()) console.log(JSON.stringify(await read(line.trim())));
}
