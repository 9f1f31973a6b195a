// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Keys() {
  return <Page title="Keys">{null}</Page>;
}
