/**
 * A QR code of a text (a deposit address), drawn as one SVG path from qrcode-generator's module grid,
 * with an accessible name that says what it encodes (the text itself is printed beside it).
 */
import qrcode from "qrcode-generator";
import { useMemo } from "react";

export function QrCode({ text, label, size = 176 }: { text: string; label: string; size?: number }) {
  const { path, modules } = useMemo(() => {
    const qr = qrcode(0, "M");
    qr.addData(text);
    qr.make();
    const count = qr.getModuleCount();
    const parts: string[] = [];
    for (let row = 0; row < count; row++) {
      for (let col = 0; col < count; col++) {
        if (qr.isDark(row, col)) parts.push(`M${col + 4} ${row + 4}h1v1h-1z`);
      }
    }
    return { path: parts.join(""), modules: count + 8 };
  }, [text]);
  return (
    <svg
      role="img"
      aria-label={label}
      className="qr-code"
      width={size}
      height={size}
      viewBox={`0 0 ${modules} ${modules}`}
      shapeRendering="crispEdges"
    >
      <title>{label}</title>
      <rect width={modules} height={modules} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  );
}
