import { strFromU8, unzipSync } from "fflate";
import { describe, expect, it, vi } from "vitest";
import { parseSkill, SKILL_LIMITS, type SkillFile, type SkillInput, SkillInvalid, skillArchive } from "./bundle.js";

const md = (frontmatter: string, body = "# PDF tools\n\nUse scripts/extract.py.\n") => `---\n${frontmatter}\n---\n${body}`;

const input = (over: Partial<SkillInput> = {}): SkillInput => ({
  name: "pdf-tools",
  skillMd: md("name: pdf-tools\ndescription: Extract text from PDF files."),
  scripts: [],
  references: [],
  assets: [],
  ...over,
});

/** The refusal parseSkill throws for an input (fails the test when it is accepted). */
function refusal(value: Partial<SkillInput> | SkillInput): SkillInvalid {
  try {
    parseSkill(input(value));
  } catch (err) {
    if (err instanceof SkillInvalid) return err;
    throw err;
  }
  throw new Error("the bundle was accepted");
}

const fieldOf = (value: Partial<SkillInput>) => refusal(value).field;
const files = (n: number, prefix = "f"): SkillFile[] =>
  Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}.txt`, content: "x" }));

describe("parseSkill", () => {
  it("reads description, license, compatibility and metadata from the frontmatter", () => {
    const skillMd = md(
      [
        "name: pdf-tools",
        "description: >",
        "  Extract text and tables",
        "  from PDF files.",
        "license: Apache-2.0",
        "compatibility: Needs python3 and poppler-utils",
        "allowed-tools: Bash(python3:*) Read",
        "x-unknown: kept out of metadata",
        "metadata:",
        "  author: ada",
        "  version: '1.0'",
        "  stars: 12",
        "  beta: true",
        "  released: 2024-01-02",
        "  reviewed: !!timestamp 2024-03-04T05:06:07Z",
        "  tags: [pdf, text]",
        "  owner:",
        "    team: docs",
        "    on_call: ~",
        "  1: numeric key",
        "  __proto__: plain key",
      ].join("\n"),
    );
    const scripts = [{ name: "extract.py", content: "print('hi')\n" }];
    const bundle = parseSkill(input({ skillMd, scripts }));
    expect(bundle).toMatchObject({
      name: "pdf-tools",
      description: "Extract text and tables from PDF files.",
      license: "Apache-2.0",
      compatibility: "Needs python3 and poppler-utils",
      skillMd,
      scripts,
      references: [],
      assets: [],
    });
    expect(bundle.metadata).toStrictEqual(
      Object.fromEntries([
        ["author", "ada"],
        ["version", "1.0"],
        ["stars", 12],
        ["beta", true],
        // YAML 1.2 core schema: a plain date stays the text written; an explicit timestamp becomes ISO.
        ["released", "2024-01-02"],
        ["reviewed", "2024-03-04T05:06:07.000Z"],
        ["tags", ["pdf", "text"]],
        ["owner", { team: "docs", on_call: null }],
        ["1", "numeric key"],
        ["__proto__", "plain key"],
      ]),
    );
    expect(Object.getPrototypeOf(bundle.metadata)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(bundle.metadata))).toStrictEqual(bundle.metadata);
  });

  it("leaves license, compatibility and metadata null when absent, and accepts a frontmatter without name", () => {
    const bundle = parseSkill(input({ skillMd: md("description: Extract text.") }));
    expect(bundle).toMatchObject({ description: "Extract text.", license: null, compatibility: null, metadata: null });
    expect(parseSkill(input({ skillMd: md("description: d\nmetadata: {}") })).metadata).toStrictEqual({});
  });

  it("tolerates a byte-order mark and CRLF line ends, dropping the mark", () => {
    const skillMd = "\uFEFF---\r\nname: pdf-tools\r\ndescription: Extract text.\r\nlicense: MIT\r\n---\r\n# Body\r\n";
    const bundle = parseSkill(input({ skillMd }));
    expect(bundle.description).toBe("Extract text.");
    expect(bundle.license).toBe("MIT");
    expect(bundle.skillMd).toBe(skillMd.slice(1));
    // A closing fence at the very end, and blanks after a fence, are fine too.
    expect(parseSkill(input({ skillMd: "---  \ndescription: d\n---" })).description).toBe("d");
  });

  describe("name", () => {
    it.each([["a"], ["pdf2text"], ["2fa"], ["a".repeat(64)]])("accepts %s", (name) => {
      expect(parseSkill(input({ name, skillMd: md("description: d") })).name).toBe(name);
    });

    it.each([
      ["", "is required"],
      ["a".repeat(65), "at most 64"],
      ["Pdf", "lowercase"],
      ["-pdf", "hyphen"],
      ["pdf-", "hyphen"],
      ["pdf--tools", "single hyphens"],
      ["pdf_tools", "lowercase letters"],
      ["pdf tools", "lowercase letters"],
      ["pdf/tools", "lowercase letters"],
    ])("refuses %j", (name, words) => {
      const err = refusal({ name, skillMd: md("description: d") });
      expect(err).toMatchObject({ field: "name", reason: "invalid_skill", status: 400 });
      expect(err.message).toMatch(/^name: /);
      expect(err.message).toContain(words);
    });

    it("refuses a name that is not a string", () => {
      expect(fieldOf({ name: 7 as unknown as string })).toBe("name");
    });

    it("must equal the frontmatter's name when that is present", () => {
      const err = refusal({ name: "pdf-tools", skillMd: md("name: pdf-kit\ndescription: d") });
      expect(err).toMatchObject({ field: "skill_md_content.name", reason: "invalid_skill", status: 400 });
      expect(err.message).toBe(
        'skill_md_content.name: is "pdf-kit" but the skill\'s name (field name) is "pdf-tools"; they must be the same',
      );
      expect(fieldOf({ skillMd: md("name: 12\ndescription: d") })).toBe("skill_md_content.name");
    });
  });

  describe("skill_md_content", () => {
    it("must be a string", () => {
      expect(fieldOf({ skillMd: undefined as unknown as string })).toBe("skill_md_content");
    });

    it.each([
      ["no frontmatter", "# Just markdown\n", "must start with a YAML frontmatter block"],
      ["a fence that is not first", "\n---\ndescription: d\n---\n", "must start with a YAML frontmatter block"],
      ["an unclosed fence", "---\ndescription: d\n# body\n", "never closed"],
      ["a list", "---\n- a\n- b\n---\n", "must be a YAML mapping"],
      ["a bare scalar", "---\njust text\n---\n", "must be a YAML mapping"],
    ])("refuses %s", (_, skillMd, words) => {
      const err = refusal({ skillMd });
      expect(err).toMatchObject({ field: "skill_md_content", reason: "invalid_skill", status: 400 });
      expect(err.message).toMatch(/^skill_md_content: /);
      expect(err.message).toContain(words);
    });

    it("reports a YAML syntax error with its line in SKILL.md", () => {
      const err = refusal({ skillMd: md("name: pdf-tools\ndescription: [unclosed\nlicense: MIT") });
      expect(err.field).toBe("skill_md_content");
      expect(err.message).toMatch(/^skill_md_content: invalid YAML in the frontmatter at line \d+, column \d+: /);

      const duplicate = refusal({ skillMd: md("description: a\nlicense: MIT\ndescription: b") });
      expect(duplicate.message).toBe(
        "skill_md_content: invalid YAML in the frontmatter at line 4, column 1: Map keys must be unique",
      );
      const tab = refusal({ skillMd: "\uFEFF---\r\ndescription: d\r\nmetadata:\r\n\tauthor: x\r\n---\r\n" });
      expect(tab.message).toContain("at line 4, column 1: Tabs are not allowed as indentation");
    });

    it("reports an alias to an unknown anchor", () => {
      expect(refusal({ skillMd: md("description: *nowhere") }).message).toMatch(
        /^skill_md_content: invalid YAML in the frontmatter: /,
      );
    });

    it.each([
      ["missing", "name: pdf-tools", "is required"],
      ["empty frontmatter", "", "is required"],
      ["empty", "description: ''", "is required"],
      ["blank", "description: '   '", "is required"],
      ["null", "description:", "is required"],
      ["a number", "description: 12", "must be text"],
      ["a list", "description: [a, b]", "must be text"],
      ["over 1024 characters", `description: ${"d".repeat(1025)}`, "at most 1024 characters"],
    ])("requires a description (%s)", (_, frontmatter, words) => {
      const err = refusal({ skillMd: md(frontmatter) });
      expect(err).toMatchObject({ field: "skill_md_content.description", reason: "invalid_skill", status: 400 });
      expect(err.message).toMatch(/^skill_md_content\.description: /);
      expect(err.message).toContain(words);
    });

    it("accepts a description of exactly 1024 characters (counted as characters, not bytes)", () => {
      const description = "é".repeat(1024);
      expect(parseSkill(input({ skillMd: md(`description: ${description}`) })).description).toBe(description);
    });

    it("checks license, compatibility, allowed-tools and metadata", () => {
      expect(fieldOf({ skillMd: md("description: d\nlicense: [MIT]") })).toBe("skill_md_content.license");
      expect(fieldOf({ skillMd: md("description: d\ncompatibility: true") })).toBe("skill_md_content.compatibility");
      expect(fieldOf({ skillMd: md(`description: d\ncompatibility: ${"c".repeat(501)}`) })).toBe(
        "skill_md_content.compatibility",
      );
      expect(parseSkill(input({ skillMd: md(`description: d\ncompatibility: ${"c".repeat(500)}`) })).compatibility).toHaveLength(
        500,
      );
      expect(parseSkill(input({ skillMd: md("description: d\ncompatibility: ''\nlicense: ''") }))).toMatchObject({
        compatibility: null,
        license: null,
      });
      expect(fieldOf({ skillMd: md("description: d\nallowed-tools: {Bash: yes}") })).toBe("skill_md_content.allowed-tools");
      expect(parseSkill(input({ skillMd: md("description: d\nallowed-tools: [Read, Bash]") })).metadata).toBeNull();

      for (const metadata of ["metadata: [a, b]", "metadata: author"]) {
        const err = refusal({ skillMd: md(`description: d\n${metadata}`) });
        expect(err).toMatchObject({ field: "skill_md_content.metadata", status: 400 });
        expect(err.message).toContain("must be a mapping");
      }
      expect(fieldOf({ skillMd: md("description: d\nmetadata:\n  scores: [1, .inf]") })).toBe(
        "skill_md_content.metadata.scores[1]",
      );
      expect(fieldOf({ skillMd: md("description: d\nmetadata:\n  blob: !!binary aGVsbG8=") })).toBe(
        "skill_md_content.metadata.blob",
      );
      expect(fieldOf({ skillMd: md("description: d\nmetadata:\n  ? [a]\n  : 1") })).toBe("skill_md_content.metadata");
      expect(fieldOf({ skillMd: md("description: d\nmetadata:\n  1: a\n  '1': b") })).toBe("skill_md_content.metadata");
      const loop = refusal({ skillMd: md("description: d\nmetadata:\n  loop: &l [*l]") });
      expect(loop.field).toBe("skill_md_content.metadata.loop[0]");
      expect(loop.message).toContain("refers to itself");
      const deep = `description: d\nmetadata:\n  deep: ${"[".repeat(40)}${"]".repeat(40)}`;
      expect(refusal({ skillMd: md(deep) }).message).toContain("nested more than 32 levels deep");
    });
  });

  describe("files", () => {
    it("accepts nested relative paths, SKILL.md inside a folder, and the same name in two groups", () => {
      const bundle = parseSkill(
        input({
          scripts: [
            { name: "lib/helpers.py", content: "" },
            { name: "SKILL.md", content: "not the skill's own" },
            { name: ".env.example", content: "A=1" },
            { name: "a..b/c...d", content: "" },
          ],
          references: [{ name: "helpers.py", content: "docs" }],
          assets: [{ name: "données/modèle.txt", content: "é" }],
        }),
      );
      expect(bundle.scripts.map((f) => f.name)).toEqual(["lib/helpers.py", "SKILL.md", ".env.example", "a..b/c...d"]);
    });

    it("keeps only name and content of each file", () => {
      const scripts = [{ name: "a.py", content: "x", mode: "0755" }] as unknown as SkillFile[];
      expect(parseSkill(input({ scripts })).scripts).toStrictEqual([{ name: "a.py", content: "x" }]);
    });

    it("refuses malformed groups and items, naming the field", () => {
      expect(fieldOf({ scripts: "a.py" as unknown as SkillFile[] })).toBe("scripts");
      expect(fieldOf({ references: [null] as unknown as SkillFile[] })).toBe("reference_files[0]");
      expect(
        fieldOf({
          assets: [
            { name: "a", content: "" },
            { name: 3, content: "" },
          ] as unknown as SkillFile[],
        }),
      ).toBe("assets[1].name");
      expect(fieldOf({ assets: [{ name: "a" }] as unknown as SkillFile[] })).toBe("assets[0].content");
    });

    it.each([
      ["../x", ".. segment"],
      ["a/../b", ".. segment"],
      ["a/..", ".. segment"],
      ["./a", ". segment"],
      ["/etc/passwd", "relative path"],
      ["a\\b", "use / between folders"],
      ["..\\x", "use / between folders"],
      ["a\u0000b", "control characters"],
      ["a\nb", "control characters"],
      ["a\tb", "control characters"],
      ["a\u007fb", "control characters"],
      ["a//b", "empty folder name"],
      ["lib/", "not end with /"],
      ["", "is required"],
      ["n".repeat(256), "at most 255 characters"],
    ])("refuses the file name %j", (name, words) => {
      const err = refusal({
        references: [
          { name: "ok.md", content: "" },
          { name, content: "" },
        ],
      });
      expect(err).toMatchObject({ field: "reference_files[1].name", reason: "invalid_skill", status: 400 });
      expect(err.message).toMatch(/^reference_files\[1\]\.name: /);
      expect(err.message).toContain(words);
    });

    it("accepts a file name of 255 characters", () => {
      expect(parseSkill(input({ assets: [{ name: "n".repeat(255), content: "" }] })).assets).toHaveLength(1);
    });

    it("refuses a name used twice in a group, also in another letter case or as a folder", () => {
      const twice = refusal({ scripts: [...files(3), { name: "f1.txt", content: "y" }] });
      expect(twice).toMatchObject({ field: "scripts[3].name", reason: "invalid_skill", status: 400 });
      expect(twice.message).toBe('scripts[3].name: "f1.txt" is already the name of scripts[1]');
      expect(
        fieldOf({
          assets: [
            { name: "Logo.png", content: "" },
            { name: "logo.png", content: "" },
          ],
        }),
      ).toBe("assets[1].name");
      expect(
        fieldOf({
          scripts: [
            { name: "lib", content: "" },
            { name: "lib/a.py", content: "" },
          ],
        }),
      ).toBe("scripts[1].name");
      expect(
        fieldOf({
          scripts: [
            { name: "lib/a.py", content: "" },
            { name: "lib", content: "" },
          ],
        }),
      ).toBe("scripts[1].name");
    });

    it("allows 100 files in all and refuses 101, naming the group where the count passes the limit", () => {
      expect(() =>
        parseSkill(input({ scripts: files(40, "s"), references: files(40, "r"), assets: files(20, "a") })),
      ).not.toThrow();
      const err = refusal({ scripts: files(40, "s"), references: files(61, "r"), assets: files(20, "a") });
      expect(err).toMatchObject({ field: "reference_files", reason: "invalid_skill", status: 400 });
      expect(err.message).toBe(
        "reference_files: the bundle has 121 files (scripts 40, reference_files 61, assets 20); at most 100 in all",
      );
      expect(fieldOf({ assets: files(SKILL_LIMITS.maxFiles + 1) })).toBe("assets");
    });
  });

  describe("size", () => {
    const skillMd = md("description: d");
    const fileName = "big.bin";
    // UTF-8 bytes of SKILL.md and the file's name; "é" is 2 bytes, so the content is counted in bytes.
    const room = SKILL_LIMITS.maxBytes - Buffer.byteLength(skillMd) - fileName.length;

    it("accepts exactly 1 MiB of SKILL.md, names and contents", () => {
      const content = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2);
      expect(Buffer.byteLength(skillMd) + fileName.length + Buffer.byteLength(content)).toBe(SKILL_LIMITS.maxBytes);
      expect(() => parseSkill(input({ skillMd, assets: [{ name: fileName, content }] }))).not.toThrow();
    });

    it("refuses one byte more with 413 skill_too_large, naming the field that passes the limit", () => {
      const content = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2) + "x";
      const err = refusal({
        skillMd,
        assets: [
          { name: fileName, content },
          { name: "small.txt", content: "s" },
        ],
      });
      expect(err).toMatchObject({ field: "assets[0].content", reason: "skill_too_large", status: 413 });
      expect(err.message).toBe(
        `assets[0].content: the bundle is ${SKILL_LIMITS.maxBytes + 1 + 9 + 1} bytes; at most 1048576 bytes (1 MiB) in all, ` +
          "counting SKILL.md and every file's name and content as UTF-8",
      );
      expect(refusal({ skillMd: md(`description: ${"d".repeat(SKILL_LIMITS.maxBytes)}`) })).toMatchObject({
        field: "skill_md_content",
        status: 413,
      });
    });
  });
});

/** Each central-directory entry's path, host system and Unix mode. */
function centralDirectory(zip: Uint8Array): { path: string; os: number; mode: number }[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const out: { path: string; os: number; mode: number }[] = [];
  for (let i = 0; i + 46 <= zip.length; i++) {
    if (view.getUint32(i, true) !== 0x02014b50) continue;
    const nameLength = view.getUint16(i + 28, true);
    out.push({
      path: strFromU8(zip.subarray(i + 46, i + 46 + nameLength)),
      os: zip[i + 5]!,
      mode: view.getUint32(i + 38, true) >>> 16,
    });
    i += 45 + nameLength;
  }
  return out;
}

describe("skillArchive", () => {
  const bundle = parseSkill(
    input({
      skillMd: "\uFEFF" + md("name: pdf-tools\ndescription: Extract text."),
      scripts: [
        { name: "extract.py", content: "#!/usr/bin/env python3\nprint('hi')\n" },
        { name: "lib/helpers.py", content: "def help(): pass\n" },
      ],
      references: [{ name: "REFERENCE.md", content: "# Reference\n" }],
      assets: [
        { name: "templates/report.md", content: "Résumé — 日本語\n" },
        { name: "empty.txt", content: "" },
      ],
    }),
  );

  it("lays the bundle out as the folder an assistant installs, sorted, UTF-8", () => {
    const entries = unzipSync(skillArchive(bundle));
    expect(Object.keys(entries)).toEqual([
      "pdf-tools/SKILL.md",
      "pdf-tools/assets/empty.txt",
      "pdf-tools/assets/templates/report.md",
      "pdf-tools/references/REFERENCE.md",
      "pdf-tools/scripts/extract.py",
      "pdf-tools/scripts/lib/helpers.py",
    ]);
    const text = Object.fromEntries(Object.entries(entries).map(([path, data]) => [path, strFromU8(data)]));
    expect(text).toStrictEqual({
      "pdf-tools/SKILL.md": md("name: pdf-tools\ndescription: Extract text."),
      "pdf-tools/assets/empty.txt": "",
      "pdf-tools/assets/templates/report.md": "Résumé — 日本語\n",
      "pdf-tools/references/REFERENCE.md": "# Reference\n",
      "pdf-tools/scripts/extract.py": "#!/usr/bin/env python3\nprint('hi')\n",
      "pdf-tools/scripts/lib/helpers.py": "def help(): pass\n",
    });
  });

  it("has only SKILL.md when there are no files", () => {
    const only = parseSkill(input());
    expect(Object.keys(unzipSync(skillArchive(only)))).toEqual(["pdf-tools/SKILL.md"]);
  });

  it("marks scripts executable for Unix unzip tools", () => {
    const modes = Object.fromEntries(centralDirectory(skillArchive(bundle)).map((e) => [e.path, [e.os, e.mode.toString(8)]]));
    expect(modes["pdf-tools/scripts/extract.py"]).toEqual([3, "100755"]);
    expect(modes["pdf-tools/scripts/lib/helpers.py"]).toEqual([3, "100755"]);
    expect(modes["pdf-tools/SKILL.md"]).toEqual([3, "100644"]);
    expect(modes["pdf-tools/assets/empty.txt"]).toEqual([3, "100644"]);
  });

  it("gives byte-identical zips for the same bundle, whatever the clock, the time zone or the order of its files", () => {
    const first = skillArchive(bundle);
    const zone = process.env.TZ;
    vi.useFakeTimers({ now: new Date("2031-07-15T12:00:00Z") });
    try {
      for (const tz of ["America/Los_Angeles", "Asia/Tokyo", "UTC"]) {
        process.env.TZ = tz;
        expect(Buffer.from(skillArchive(bundle)).equals(Buffer.from(first))).toBe(true);
      }
    } finally {
      vi.useRealTimers();
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    const reordered = { ...bundle, scripts: [...bundle.scripts].reverse(), assets: [...bundle.assets].reverse() };
    expect(Buffer.from(skillArchive(reordered)).equals(Buffer.from(first))).toBe(true);
  });

  it("refuses to build paths from an unsafe stored name", () => {
    expect(() => skillArchive({ ...bundle, name: "../x" })).toThrow(/refusing to archive skill name/);
    expect(() => skillArchive({ ...bundle, assets: [{ name: "../../etc/cron.d/x", content: "" }] })).toThrow(
      /refusing to archive assets file/,
    );
  });
});
