import { describe, expect, test } from "vitest";
import { endpointOf, telemetryConfig } from "./config";

describe("telemetryConfig (C18: off unless an OTLP endpoint is set)", () => {
  test("no endpoint variable: off", () => {
    expect(telemetryConfig({})).toBeNull();
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "  ", OTEL_SERVICE_NAME: "x" })).toBeNull();
  });

  test("the base endpoint gets /v1/traces for HTTP; the traces endpoint is used as given", () => {
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/" })).toEqual({
      endpoint: "http://127.0.0.1:4318/v1/traces",
      protocol: "http/protobuf",
      unknownProtocol: null,
      captureContent: false,
      batch: {},
    });
    const both = telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:9/custom" });
    expect(both?.endpoint).toBe("http://b:9/custom");
  });

  test("the protocol: traces variable first, then the general one; grpc takes the endpoint as given", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" };
    expect(telemetryConfig(env)).toMatchObject({ protocol: "grpc", endpoint: "http://a:4317" });
    expect(telemetryConfig({ ...env, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: undefined })).toMatchObject({ protocol: "http/json", endpoint: "http://a:4317/v1/traces" });
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_PROTOCOL: "carrier-pigeon" })).toMatchObject({ protocol: "http/protobuf", unknownProtocol: "carrier-pigeon" });
  });

  test("content capture only with the variable set to true", () => {
    const on = (v: string | undefined) => telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: v })?.captureContent;
    expect(on(undefined)).toBe(false);
    expect(on("false")).toBe(false);
    expect(on("1")).toBe(false);
    expect(on("true")).toBe(true);
    expect(on("TRUE")).toBe(true);
  });

  test("OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off as they do every SDK", () => {
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_TRACES_EXPORTER: "none" })).toBeNull();
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_TRACES_EXPORTER: "otlp" })).not.toBeNull();
  });

  test("timeout and batch settings from the variables the SDK names; junk is ignored as the SDK ignores it", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_TIMEOUT: "300", OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_BSP_MAX_QUEUE_SIZE: "10", OTEL_BSP_EXPORT_TIMEOUT: "soon" };
    expect(telemetryConfig(env)).toMatchObject({ timeoutMs: 300, batch: { scheduledDelayMillis: 20, maxQueueSize: 10 } });
    expect(telemetryConfig(env)!.batch).not.toHaveProperty("exportTimeoutMillis");
    expect(telemetryConfig({ ...env, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "50" })!.timeoutMs).toBe(50);
    expect(telemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a" })).not.toHaveProperty("timeoutMs");
  });

  test("endpointOf without any endpoint is a programming error", () => {
    expect(() => endpointOf("http/json", null, null)).toThrow(/no OTLP endpoint/);
  });
});
