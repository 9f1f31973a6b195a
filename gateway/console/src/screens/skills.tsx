// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Skills() {
  return <Page title="Skills">{null}</Page>;
}
