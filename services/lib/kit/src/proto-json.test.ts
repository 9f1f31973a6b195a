import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OrgRole, OrgRoleSchema } from "@toolport/proto/toolport/common/v1/principal_pb";
import { ErrorClass, ErrorClassSchema } from "@toolport/proto/toolport/common/v1/types_pb";
import { describe, expect, it } from "vitest";
import { enumName, isoTime } from "./proto-json.js";

describe("proto values in JSON", () => {
  it("names an enum value without its prefix, lower-cased; UNSPECIFIED and unknown numbers are null", () => {
    expect(enumName(OrgRoleSchema, OrgRole.OWNER)).toBe("owner");
    expect(enumName(ErrorClassSchema, ErrorClass.UPSTREAM)).toBe("upstream");
    expect(enumName(OrgRoleSchema, OrgRole.UNSPECIFIED)).toBeNull();
    expect(enumName(OrgRoleSchema, 99)).toBeNull();
  });

  it("writes timestamps as ISO 8601 with milliseconds", () => {
    expect(isoTime(timestampFromDate(new Date("2026-01-02T03:04:05.678Z")))).toBe("2026-01-02T03:04:05.678Z");
    expect(isoTime(undefined)).toBeNull();
  });
});
