// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Workflows() {
  return <Page title="Workflows">{null}</Page>;
}
