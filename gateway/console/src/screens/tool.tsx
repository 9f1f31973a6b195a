// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function ToolPage({ toolId }: { toolId: string }) {
  return <Page title="ToolPage">{null}</Page>;
}
