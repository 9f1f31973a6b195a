/**
 * importMcpServer's checks of mcp_server.url before anything is dialled: not a URL, not http(s), or
 * carrying a user name or password (which fetch would refuse, so the import used to say the server was
 * unreachable) are each a 400 invalid_mcp_server_url naming the field.
 */
import { AddressPolicy, Outbound } from "@toolport/kit/outbound";
import { afterAll, describe, expect, it } from "vitest";
import { importMcpServer } from "./mcp.js";

const outbound = new Outbound({ policy: new AddressPolicy() });
afterAll(() => outbound.close());

describe("importMcpServer URL checks", () => {
  it("refuses URLs that are not http(s), or carry credentials, without dialling", async () => {
    for (const url of [
      "not a url",
      "file:///etc/passwd",
      "http://public.example@127.0.0.1:9/mcp",
      "http://user:secret@mcp.example/mcp",
    ]) {
      await expect(importMcpServer(url, outbound), url).rejects.toMatchObject({
        reason: "invalid_mcp_server_url",
        details: { field: "mcp_server.url" },
      });
    }
  });
});
