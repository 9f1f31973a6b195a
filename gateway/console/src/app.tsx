/**
 * The console's frame: sign-in when signed out, otherwise the left-hand navigation (a menu button at
 * phone width), the organization switcher, and the screen for the address. Every route lives under
 * /console (the gateway answers index.html for each, so a link such as a tool's configuration_url
 * opens its screen directly); screens load as separate chunks. The OAuth consent page
 * (/oauth/authorize, where an MCP client sends the person) has a frame of its own, without the
 * navigation: the person came to answer one question. Signing in there keeps the address, and so the
 * request being answered.
 */
import {
  Activity as ActivityIcon,
  Boxes,
  ClipboardCheck,
  KeyRound,
  Library,
  LogOut,
  type LucideIcon,
  Menu,
  Plug,
  Search,
  Sparkles,
  Wallet as WalletIcon,
  Webhook,
  Workflow,
} from "lucide-react";
import { lazy, type ReactNode, Suspense, useEffect, useRef, useState } from "react";
import { Link, Redirect, Route, Router, Switch, useLocation } from "wouter";
import { SignIn } from "./screens/sign-in";
import { useSessionState } from "./session";
import { ErrorBoundary } from "./ui/error-boundary";
import { Loading, Logo } from "./ui/index";

const Catalog = lazy(() => import("./screens/catalog"));
const ToolPage = lazy(() => import("./screens/tool"));
const Services = lazy(() => import("./screens/services"));
const Publish = lazy(() => import("./screens/publish"));
const ServicePage = lazy(() => import("./screens/service"));
const Connect = lazy(() => import("./screens/connect"));
const Keys = lazy(() => import("./screens/keys"));
const KeyUsage = lazy(() => import("./screens/key-usage"));
const Activity = lazy(() => import("./screens/activity"));
const Wallet = lazy(() => import("./screens/wallet"));
const Webhooks = lazy(() => import("./screens/webhooks"));
const WebhookPage = lazy(() => import("./screens/webhook"));
const Skills = lazy(() => import("./screens/skills"));
const Review = lazy(() => import("./screens/review"));
const Workflows = lazy(() => import("./screens/workflows"));
const WorkflowPage = lazy(() => import("./screens/workflow"));
const McpJson = lazy(() => import("./screens/mcp"));
const Directory = lazy(() => import("./screens/directory"));
const OAuthConsent = lazy(() => import("./screens/oauth-consent"));

/** The consent page's address (under /console). */
const CONSENT_PATH = "/oauth/authorize";

interface NavItem {
  href: string;
  label: string;
  icon: LucideIcon;
  adminOnly?: boolean;
}

const NAV: NavItem[] = [
  { href: "/catalog", label: "Catalog", icon: Search },
  { href: "/services", label: "My services", icon: Boxes },
  { href: "/keys", label: "API keys", icon: KeyRound },
  { href: "/activity", label: "Activity", icon: ActivityIcon },
  { href: "/wallet", label: "Wallet", icon: WalletIcon },
  { href: "/webhooks", label: "Webhooks", icon: Webhook },
  { href: "/skills", label: "Skills", icon: Sparkles },
  { href: "/review", label: "Review queue", icon: ClipboardCheck, adminOnly: true },
  { href: "/directory", label: "API directory", icon: Library, adminOnly: true },
  { href: "/workflows", label: "Workflows", icon: Workflow },
  { href: "/mcp", label: "Connect an assistant", icon: Plug },
];

export function App() {
  return (
    <Router base="/console">
      <Shell />
    </Router>
  );
}

function Shell() {
  const { signedIn } = useSessionState();
  const [location] = useLocation();
  const consent = location === CONSENT_PATH;
  if (!signedIn) return <SignIn forConsent={consent} />;
  return consent ? <ConsentFrame /> : <Frame />;
}

/** The consent page alone: who is signed in, and so grants (with a way to switch), then the question. */
function ConsentFrame() {
  const { signedIn } = useSessionState();
  const [busy, setBusy] = useState(false);
  return (
    <div className="consent-frame">
      <header className="consent-head">
        <span className="brand">
          <Logo size={24} />
          Toolport
        </span>
        <div className="account">
          <span data-testid="signed-in-as">
            Signed in as <strong>{signedIn?.account?.email ?? "…"}</strong>
          </span>
          <button
            type="button"
            className="button-secondary"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              await signedIn?.signOut();
            }}
          >
            Not you? Sign out
          </button>
        </div>
      </header>
      <main id="main" className="consent">
        <ErrorBoundary>
          <Suspense fallback={<Loading />}>
            <OAuthConsent />
          </Suspense>
        </ErrorBoundary>
      </main>
    </div>
  );
}

function Frame() {
  const { signedIn } = useSessionState();
  const [location] = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const main = useRef<HTMLElement>(null);
  const isAdmin = signedIn?.account?.is_platform_admin === true;

  // A new screen (not the first): close the phone menu and move focus to the content, as a page load
  // would. On the first, focus stays at the top of the page, where the skip link is the first stop.
  const firstScreen = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each change of address
  useEffect(() => {
    if (firstScreen.current) {
      firstScreen.current = false;
      return;
    }
    setMenuOpen(false);
    main.current?.focus({ preventScroll: true });
  }, [location]);

  return (
    <div className="frame">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/catalog" className="brand">
          <Logo size={26} />
          Toolport
        </Link>
        <button
          type="button"
          className="menu-button button-secondary"
          aria-expanded={menuOpen}
          aria-controls="navigation"
          onClick={() => setMenuOpen((open) => !open)}
        >
          <Menu className="icon" size={18} aria-hidden="true" />
          Menu
        </button>
      </header>
      <nav id="navigation" className={menuOpen ? "sidebar open" : "sidebar"} aria-label="Console">
        <Link href="/catalog" className="brand sidebar-brand">
          <Logo />
          Toolport <span className="muted">console</span>
        </Link>
        <OrgSwitcher />
        <ul>
          {NAV.filter((item) => !item.adminOnly || isAdmin).map((item) => (
            <li key={item.href}>
              <Link href={item.href} aria-current={location.startsWith(item.href) ? "page" : undefined}>
                <item.icon className="icon" size={18} aria-hidden="true" />
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
        <Account />
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        <ErrorBoundary key={location}>
          <Suspense fallback={<Loading />}>
            <Routes />
          </Suspense>
        </ErrorBoundary>
      </main>
    </div>
  );
}

function Routes() {
  return (
    <Switch>
      <Route path="/">
        <Redirect to="/catalog" replace />
      </Route>
      <Route path="/catalog" component={Catalog} />
      <Route path="/tools/:toolId">{(p) => <ToolPage toolId={p.toolId} />}</Route>
      <Route path="/services" component={Services} />
      <Route path="/services/new" component={Publish} />
      <Route path="/services/:serviceId">{(p) => <ServicePage serviceId={p.serviceId} />}</Route>
      <Route path="/services/:serviceId/connect">{(p) => <Connect serviceId={p.serviceId} />}</Route>
      <Route path="/keys" component={Keys} />
      <Route path="/keys/:keyId">{(p) => <KeyUsage keyId={p.keyId} />}</Route>
      <Route path="/activity" component={Activity} />
      <Route path="/wallet" component={Wallet} />
      <Route path="/webhooks" component={Webhooks} />
      <Route path="/webhooks/:webhookId">{(p) => <WebhookPage webhookId={p.webhookId} />}</Route>
      <Route path="/skills" component={Skills} />
      <Route path="/review" component={Review} />
      <Route path="/directory" component={Directory} />
      <Route path="/workflows" component={Workflows} />
      <Route path="/workflows/:workflowId">{(p) => <WorkflowPage workflowId={p.workflowId} />}</Route>
      <Route path="/mcp" component={McpJson} />
      <Route>
        <NotFound />
      </Route>
    </Switch>
  );
}

function NotFound(): ReactNode {
  const [location] = useLocation();
  return (
    <>
      <h1>Not found</h1>
      <p>
        The console has no page at <code>/console{location}</code>. <Link href="/catalog">Go to the catalog</Link>.
      </p>
    </>
  );
}

function OrgSwitcher() {
  const { signedIn } = useSessionState();
  if (!signedIn) return null;
  const { organizations, orgId, setOrgId, organization } = signedIn;
  // The role is said below the picker, with the whole name: a long name and its role did not fit the sidebar.
  return (
    <div className="org-switcher">
      <label htmlFor="organization">Organization</label>
      <select
        id="organization"
        value={orgId}
        title={organization?.name}
        aria-describedby="organization-role"
        onChange={(e) => setOrgId(e.target.value)}
      >
        {organizations.length === 0 ? <option value={orgId}>Personal</option> : null}
        {organizations.map((o) => (
          <option key={o.id} value={o.id}>
            {o.is_personal ? `${o.name} (personal)` : o.name}
          </option>
        ))}
      </select>
      {/* The whole name, which a narrow picker may cut short, and the person's role there. */}
      <span id="organization-role" className="org-role muted">
        {organization ? (
          <>
            <strong className="org-name">
              {organization.is_personal ? `${organization.name} (personal)` : organization.name}
            </strong>
            , as {organization.role}
          </>
        ) : null}
      </span>
    </div>
  );
}

function Account() {
  const { signedIn } = useSessionState();
  const [busy, setBusy] = useState(false);
  if (!signedIn) return null;
  return (
    <div className="account">
      <span className="account-name">
        <strong>{signedIn.account?.name ?? "…"}</strong>
        <br />
        <span className="muted">{signedIn.account?.email}</span>
      </span>
      <button
        type="button"
        className="button-secondary"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          await signedIn.signOut();
        }}
      >
        <LogOut className="icon" size={16} aria-hidden="true" />
        Sign out
      </button>
    </div>
  );
}
