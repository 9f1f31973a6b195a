// SCAFFOLD: replaced by the screen's implementation.
import { Page } from "../ui/index";

export default function Catalog() {
  return <Page title="Catalog">{null}</Page>;
}
