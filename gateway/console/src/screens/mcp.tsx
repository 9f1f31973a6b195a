// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function McpJson() {
  return <Page title="McpJson">{null}</Page>;
}
