/**
 * An OTLP/HTTP trace receiver for tests: a real HTTP server taking `POST /v1/traces` as
 * `application/x-protobuf` (the SDK's default protocol) and decoding each request with the
 * official protobuf definitions (opentelemetry-proto, as generated into
 * `@opentelemetry/otlp-transformer`, installed as `otlp-protos`). Anything else is refused.
 */
import { createServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  toObject(message: unknown, options: { longs: StringConstructor }): unknown;
}
const require = createRequire(import.meta.url);
const protos = require("otlp-protos/build/src/generated/root.js") as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoType; ExportTraceServiceResponse: ProtoType } };
      };
    };
  };
};
const { ExportTraceServiceRequest, ExportTraceServiceResponse } =
  protos.opentelemetry.proto.collector.trace.v1;

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface DecodedSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  status?: { code?: number };
}
interface DecodedRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: DecodedSpan[] }[] }[];
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString("hex");

function value(v: AnyValue | undefined): AttributeValue {
  if (v?.stringValue !== undefined) return v.stringValue;
  if (v?.intValue !== undefined) return Number(v.intValue);
  if (v?.doubleValue !== undefined) return v.doubleValue;
  return v?.boolValue ?? "";
}

function attributes(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** The spans of one decoded export request. */
function spansOf(body: Uint8Array): ReceivedSpan[] {
  const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
    longs: String,
  }) as DecodedRequest;
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributes(resourceSpans.resource?.attributes)["service.name"] ?? "");
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: span.name,
        start: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
        end: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
        attributes: attributes(span.attributes),
        status: span.status?.code ?? 0,
      })),
    );
  });
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export interface OtlpReceiver {
  /** The endpoint to put in OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests refused (wrong path, method or content type, undecodable body), with why. */
  refused: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request);
      const type = request.headers["content-type"] ?? "";
      if (request.method !== "POST" || request.url !== "/v1/traces" || type !== "application/x-protobuf") {
        refused.push(`${request.method} ${request.url} ${type}`);
        response.writeHead(415).end();
        return;
      }
      try {
        spans.push(...spansOf(body));
      } catch (error) {
        refused.push(`undecodable: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      const answer = ExportTraceServiceResponse.encode({}).finish();
      response.writeHead(200, { "Content-Type": "application/x-protobuf" }).end(Buffer.from(answer));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
