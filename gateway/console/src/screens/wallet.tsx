/**
 * The wallet: its USDC balance (held and available), funding by card (a Stripe Checkout link) or by
 * crypto (the deposit address, its network and USDC contract, and a QR code), confirming a deposit by
 * its transaction hash, the spending settings, and the latest ledger entries. Which funding methods the
 * deployment offers comes with the wallet (`funding`), so an unconfigured one is shown as unavailable,
 * with its reason, before anyone tries it. Amounts are integers throughout: atomic units and cents.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useSearch } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, CopyButton, cents, ErrorNote, Field, Loading, Note, Page, TableWrap, When } from "../ui/index";
import { parseDollars, parseUsdc, usdc, usdcInput } from "../ui/keys-money";
import { QrCode } from "../ui/wallet-qr";

type Funding = components["schemas"]["WalletFunding"];
type FundingOptions = components["schemas"]["FundingOptions"];
type FundingOption = components["schemas"]["FundingOption"];
type DepositConfirmation = components["schemas"]["DepositConfirmation"];
type Settings = components["schemas"]["SpendingSettings"];
type LedgerEntry = components["schemas"]["LedgerEntry"];

const MIN_CARD_CENTS = 100;
const MAX_CARD_CENTS = 10_000_000;
const MAX_PER_CALL_ATOMIC = 5_000_000n;
const MAX_DAILY_ATOMIC = 9_007_199_254_740_991n;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

const NETWORKS: Record<string, string> = {
  "eip155:1": "Ethereum",
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia (test network)",
};
const networkName = (id: string) => (NETWORKS[id] ? `${NETWORKS[id]} (${id})` : id);

export default function Wallet() {
  const { api, orgId } = useSession();
  const checkout = new URLSearchParams(useSearch()).get("checkout");
  const wallet = useQuery({
    queryKey: ["wallet", orgId],
    queryFn: () => unwrap(api.GET("/v1/agents/wallet")),
  });
  return (
    <Page title="Wallet">
      {checkout === "success" ? (
        <Note kind="success">
          Card payment received by Stripe: the balance goes up as soon as the payment is confirmed, usually within a minute.
        </Note>
      ) : null}
      {checkout === "cancelled" ? <Note kind="warning">The card checkout was cancelled: nothing was charged.</Note> : null}
      <section aria-labelledby="wallet-balance">
        <h2 id="wallet-balance">Balance</h2>
        {wallet.isPending ? <Loading what="Loading the wallet" /> : null}
        <ErrorNote error={wallet.error} />
        {wallet.data ? (
          <dl className="totals">
            <div>
              <dt>Balance</dt>
              <dd data-testid="wallet-balance">{usdc(wallet.data.balance_atomic)} USDC</dd>
            </div>
            <div>
              <dt>Held for calls in flight</dt>
              <dd>{usdc(wallet.data.held_atomic)} USDC</dd>
            </div>
            <div>
              <dt>Available</dt>
              <dd>{usdc(wallet.data.available_atomic)} USDC</dd>
            </div>
          </dl>
        ) : null}
      </section>
      <section aria-labelledby="wallet-fund">
        <h2 id="wallet-fund">Add funds</h2>
        {wallet.data ? (
          <div className="fund-grid">
            <CardFunding option={wallet.data.funding.card_checkout} />
            <CryptoFunding funding={wallet.data.funding} />
          </div>
        ) : null}
      </section>
      {wallet.data ? (
        <section aria-labelledby="wallet-confirm">
          <h2 id="wallet-confirm">Confirm a deposit</h2>
          <ConfirmDeposit funding={wallet.data.funding} />
        </section>
      ) : null}
      <section aria-labelledby="wallet-settings">
        <h2 id="wallet-settings">Spending settings</h2>
        <SpendingSettings />
      </section>
      <section aria-labelledby="wallet-ledger">
        <h2 id="wallet-ledger">Recent holds and charges</h2>
        <Ledger />
      </section>
    </Page>
  );
}

/** Why a funding method is not offered here, as the API said it. */
function Unavailable({ option, testId }: { option: FundingOption; testId: string }) {
  return (
    <Note kind="warning">
      <span data-testid={testId}>{option.message ?? "Not available on this server."}</span>{" "}
      {option.reason ? <code>{option.reason}</code> : null}
    </Note>
  );
}

function CardFunding({ option }: { option: FundingOption }) {
  if (!option.available) {
    return (
      <section className="card" aria-labelledby="fund-card">
        <h3 id="fund-card">By card</h3>
        <p className="muted">Card payments through Stripe Checkout.</p>
        <Unavailable option={option} testId="card-unavailable" />
      </section>
    );
  }
  return <CardFundingForm />;
}

function CardFundingForm() {
  const { withKey } = useSession();
  const [amount, setAmount] = useState("25");
  const [problem, setProblem] = useState<string | null>(null);
  const fund = useMutation({
    mutationFn: (amountCents: number) =>
      withKey((c) => c.POST("/v1/agents/wallets/fund", { body: { method: "card_checkout", amount_cents: amountCents } })),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseDollars(amount);
    if (!parsed.ok) return setProblem(`The amount ${parsed.error}.`);
    if (parsed.value === null || parsed.value < MIN_CARD_CENTS || parsed.value > MAX_CARD_CENTS) {
      return setProblem(`The amount must be from ${cents(MIN_CARD_CENTS)} to ${cents(MAX_CARD_CENTS)}.`);
    }
    setProblem(null);
    fund.mutate(parsed.value);
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="fund-card">
      <h3 id="fund-card">By card</h3>
      <Field
        label="Amount (USD)"
        hint={
          problem ? <span className="field-error">{problem}</span> : "From $1.00 to $100,000.00; paid on Stripe's checkout page."
        }
      >
        {(props) => (
          <input
            {...props}
            inputMode="decimal"
            autoComplete="off"
            value={amount}
            aria-invalid={problem ? true : undefined}
            onChange={(e) => setAmount(e.target.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={fund.isPending}>
        {fund.isPending ? "Creating the checkout…" : "Create a checkout link"}
      </button>
      <ErrorNote error={fund.error} />
      {fund.data?.checkout_url ? (
        <Note kind="success">
          <a href={fund.data.checkout_url}>Pay on Stripe Checkout</a>: the wallet is credited when the payment completes.
        </Note>
      ) : null}
    </form>
  );
}

function CryptoFunding({ funding: options }: { funding: FundingOptions }) {
  if (!options.crypto.available) {
    return (
      <section className="card" aria-labelledby="fund-crypto">
        <h3 id="fund-crypto">By crypto (USDC)</h3>
        <Unavailable option={options.crypto} testId="crypto-unavailable" />
      </section>
    );
  }
  return <CryptoFundingAddress options={options} />;
}

function CryptoFundingAddress({ options }: { options: FundingOptions }) {
  const { withKey } = useSession();
  const fund = useMutation({
    mutationFn: (): Promise<Funding> => withKey((c) => c.POST("/v1/agents/wallets/fund", { body: { method: "crypto" } })),
  });
  const funding = fund.data;
  return (
    <section className="card" aria-labelledby="fund-crypto">
      <h3 id="fund-crypto">By crypto (USDC)</h3>
      {funding?.deposit_address ? (
        <div className="deposit">
          <QrCode text={funding.deposit_address} label={`QR code of the deposit address ${funding.deposit_address}`} />
          <dl className="deposit-facts">
            <dt>Deposit address</dt>
            <dd className="copy-row">
              <code className="secret" data-testid="deposit-address">
                {funding.deposit_address}
              </code>
              <CopyButton text={funding.deposit_address} label="Copy the address" />
            </dd>
            <dt>Network</dt>
            <dd data-testid="deposit-network">{networkName(funding.network ?? "")}</dd>
            <dt>USDC contract</dt>
            <dd>
              <code className="secret">{funding.usdc_contract}</code>
            </dd>
          </dl>
          <p className="hint" data-testid="deposit-hint">
            Send only USDC on this network to this address.{" "}
            {options.automatic_deposits
              ? `The balance goes up by itself once the transfer has ${options.required_confirmations} confirmations; you can also confirm it by its transaction hash below.`
              : options.confirm_deposit.available
                ? `Once the transfer has ${options.required_confirmations} confirmations, confirm it by its transaction hash below to credit the balance.`
                : "This server cannot confirm deposits yet (see below): keep the transaction hash."}
          </p>
        </div>
      ) : (
        <>
          <p className="muted">Send USDC from any wallet to this wallet's own deposit address.</p>
          <button type="button" onClick={() => fund.mutate()} disabled={fund.isPending}>
            {fund.isPending ? "Loading the address…" : "Show the deposit address"}
          </button>
        </>
      )}
      {funding && !funding.deposit_address ? <Note kind="warning">This platform has no deposit address configured.</Note> : null}
      <ErrorNote error={fund.error} />
    </section>
  );
}

function SpendingSettings() {
  const { api, orgId } = useSession();
  const settings = useQuery({
    queryKey: ["spending-settings", orgId],
    queryFn: () => unwrap(api.GET("/v1/x402/settings")),
  });
  if (settings.isPending) return <Loading what="Loading the spending settings" />;
  if (settings.error) return <ErrorNote error={settings.error} />;
  return <SettingsForm key={settings.data.id} settings={settings.data} />;
}

function SettingsForm({ settings }: { settings: Settings }) {
  const { api, orgId } = useSession();
  const queryClient = useQueryClient();
  const [perCall, setPerCall] = useState(usdcInput(settings.max_per_call_atomic));
  const [daily, setDaily] = useState(settings.daily_limit_atomic === null ? "" : usdcInput(settings.daily_limit_atomic));
  const [problems, setProblems] = useState<{ perCall?: string; daily?: string }>({});
  const [saved, setSaved] = useState(false);
  const save = useMutation({
    mutationFn: (body: { max_per_call_atomic: string; daily_limit_atomic: string | null }) =>
      unwrap(api.PATCH("/v1/x402/settings", { body })),
    onSuccess: (next) => {
      setSaved(true);
      queryClient.setQueryData(["spending-settings", orgId], next);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    const found: { perCall?: string; daily?: string } = {};
    const max = parseUsdc(perCall);
    const limit = parseUsdc(daily);
    if (!max.ok) found.perCall = `The per-call maximum ${max.error}.`;
    else if (max.value === null) found.perCall = "Enter a per-call maximum (0 stops paid calls).";
    else if (max.value > MAX_PER_CALL_ATOMIC)
      found.perCall = `The per-call maximum can be at most ${usdc(MAX_PER_CALL_ATOMIC)} USDC.`;
    if (!limit.ok) found.daily = `The daily limit ${limit.error}.`;
    else if (limit.value !== null && limit.value > MAX_DAILY_ATOMIC) found.daily = "The daily limit is too large.";
    setProblems(found);
    if (found.perCall || found.daily || !max.ok || max.value === null || !limit.ok) return;
    save.mutate({
      max_per_call_atomic: String(max.value),
      daily_limit_atomic: limit.value === null ? null : String(limit.value),
    });
  };
  return (
    <form className="settings-form" onSubmit={submit} noValidate aria-labelledby="wallet-settings">
      <p className="muted">What paid calls may spend from this wallet, whichever key makes them.</p>
      <div className="form-grid">
        <Field
          label="Per-call maximum (USDC)"
          hint={
            problems.perCall ? (
              <span className="field-error">{problems.perCall}</span>
            ) : (
              "The most one call may cost: 0 to 5 USDC."
            )
          }
        >
          {(props) => (
            <input
              {...props}
              inputMode="decimal"
              autoComplete="off"
              value={perCall}
              aria-invalid={problems.perCall ? true : undefined}
              onChange={(e) => setPerCall(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Daily limit (USDC)"
          hint={
            problems.daily ? (
              <span className="field-error">{problems.daily}</span>
            ) : (
              "The most spent per day (UTC); empty for no daily limit."
            )
          }
        >
          {(props) => (
            <input
              {...props}
              inputMode="decimal"
              autoComplete="off"
              value={daily}
              aria-invalid={problems.daily ? true : undefined}
              onChange={(e) => setDaily(e.target.value)}
            />
          )}
        </Field>
      </div>
      <button type="submit" disabled={save.isPending}>
        {save.isPending ? "Saving…" : "Save spending settings"}
      </button>
      <ErrorNote error={save.error} />
      {saved ? <Note kind="success">Saved.</Note> : null}
    </form>
  );
}

const KINDS: Record<string, { label: string; badge: string }> = {
  deposit: { label: "Deposit", badge: "completed" },
  card_payment: { label: "Card payment", badge: "completed" },
  hold: { label: "Hold", badge: "pending" },
  capture: { label: "Charge", badge: "neutral" },
  release: { label: "Hold released", badge: "neutral" },
  refund: { label: "Refund", badge: "completed" },
};

function Ledger() {
  const { api, orgId } = useSession();
  const ledger = useQuery({
    queryKey: ["wallet-ledger", orgId],
    queryFn: () => unwrap(api.GET("/v1/agents/wallet/ledger", { params: { query: { limit: 20 } } })),
  });
  if (ledger.isPending) return <Loading what="Loading the ledger" />;
  if (ledger.error) return <ErrorNote error={ledger.error} />;
  if (ledger.data.length === 0) return <p className="muted">No holds, charges or deposits yet.</p>;
  return (
    <TableWrap label="Recent holds and charges">
      <table>
        <caption className="visually-hidden">The latest 20 ledger entries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col" className="number">
              Amount (USDC)
            </th>
            <th scope="col" className="number">
              Balance after
            </th>
            <th scope="col">Reference</th>
          </tr>
        </thead>
        <tbody>
          {ledger.data.map((entry: LedgerEntry) => {
            const kind = entry.kind ? KINDS[entry.kind] : undefined;
            const amount = BigInt(entry.amount_atomic);
            return (
              <tr key={entry.id}>
                <td>
                  <When at={entry.created_at} />
                </td>
                <td>{kind ? <Badge value={kind.badge} label={kind.label} /> : <span className="muted">other</span>}</td>
                <td className="number">{amount > 0n ? `+${usdc(amount)}` : usdc(amount)}</td>
                <td className="number">{usdc(entry.balance_after_atomic)}</td>
                <td>
                  <code className="reference" title={entry.reference}>
                    {entry.reference}
                  </code>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Credits a USDC transfer to this wallet's deposit address by its hash (once; a second time is refused). */
function ConfirmDeposit({ funding }: { funding: FundingOptions }) {
  const { api, orgId } = useSession();
  const queryClient = useQueryClient();
  const [hash, setHash] = useState("");
  const [amount, setAmount] = useState("");
  const [problems, setProblems] = useState<{ hash?: string; amount?: string }>({});
  const confirm = useMutation({
    mutationFn: (body: { tx_hash: string; expected_amount_atomic: string }): Promise<DepositConfirmation> =>
      unwrap(api.POST("/v1/agents/wallets/confirm-deposit", { body })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["wallet", orgId] });
      void queryClient.invalidateQueries({ queryKey: ["wallet-ledger", orgId] });
    },
  });
  if (!funding.confirm_deposit.available) return <Unavailable option={funding.confirm_deposit} testId="confirm-unavailable" />;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found: { hash?: string; amount?: string } = {};
    const txHash = hash.trim();
    if (!TX_HASH.test(txHash)) found.hash = "Enter the transaction hash: 0x followed by 64 hexadecimal characters.";
    const parsed = parseUsdc(amount);
    if (!parsed.ok) found.amount = `The amount ${parsed.error}.`;
    else if (parsed.value === null || parsed.value <= 0n) found.amount = "Enter the USDC amount you sent.";
    setProblems(found);
    if (found.hash || found.amount || !parsed.ok || parsed.value === null) return;
    confirm.mutate({ tx_hash: txHash, expected_amount_atomic: String(parsed.value) });
  };
  return (
    <form className="settings-form" onSubmit={submit} noValidate aria-labelledby="wallet-confirm">
      <p className="muted">
        Sent USDC to the deposit address? Credit it now with its transaction hash once it has {funding.required_confirmations}{" "}
        confirmations{funding.automatic_deposits ? " (it is also credited by itself; never twice)" : ""}.
      </p>
      <div className="form-grid">
        <Field
          label="Transaction hash"
          hint={problems.hash ? <span className="field-error">{problems.hash}</span> : "The hash of your USDC transfer (0x…)."}
        >
          {(props) => (
            <input
              {...props}
              autoComplete="off"
              spellCheck={false}
              value={hash}
              aria-invalid={problems.hash ? true : undefined}
              onChange={(e) => setHash(e.target.value)}
            />
          )}
        </Field>
        <Field
          label="Amount sent (USDC)"
          hint={problems.amount ? <span className="field-error">{problems.amount}</span> : "Exactly what the transfer sent."}
        >
          {(props) => (
            <input
              {...props}
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              aria-invalid={problems.amount ? true : undefined}
              onChange={(e) => setAmount(e.target.value)}
            />
          )}
        </Field>
      </div>
      <button type="submit" disabled={confirm.isPending}>
        {confirm.isPending ? "Confirming…" : "Confirm the deposit"}
      </button>
      <ErrorNote error={confirm.error} />
      {confirm.data ? (
        <Note kind="success">
          <span data-testid="deposit-credited">
            Credited {usdc(confirm.data.credited_atomic ?? 0)} USDC: the balance is now {usdc(confirm.data.balance_atomic)} USDC.
          </span>
        </Note>
      ) : null}
    </form>
  );
}
