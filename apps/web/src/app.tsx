import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiFailure, client } from "./api/client.ts";
import type { Session } from "./api/types.ts";
import { ErrorState, Loading } from "./components/states.tsx";
import { SessionContext } from "./lib/hooks.ts";
import { href, type Route, useRoute } from "./lib/router.ts";
import { getToken, setToken } from "./lib/token-store.ts";
import { ChartsView } from "./views/charts-view.tsx";
import { DeliveriesView } from "./views/deliveries-view.tsx";
import { FleetView } from "./views/fleet-view.tsx";
import { IncidentsView } from "./views/incidents-view.tsx";
import { IntakeView } from "./views/intake-view.tsx";
import { NeedsView } from "./views/needs-view.tsx";
import { ProjectView } from "./views/project-view.tsx";
import { RunView } from "./views/run-view.tsx";
import { SignIn } from "./views/sign-in.tsx";
import { TaskView } from "./views/task-view.tsx";
import { WorkersView } from "./views/workers-view.tsx";

const NAV: { view: Route["view"]; label: string; href: string }[] = [
  { view: "fleet", label: "Fleet", href: href.fleet() },
  { view: "needs", label: "Needs you", href: href.needs() },
  { view: "incidents", label: "Incidents", href: href.incidents() },
  { view: "deliveries", label: "Notifications", href: href.deliveries() },
  { view: "workers", label: "Workers & queues", href: href.workers() },
  { view: "charts", label: "Charts", href: href.charts() },
];

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [state, setState] = useState<"checking" | "signed-out" | "ready" | "error">(
    getToken() ? "checking" : "signed-out",
  );
  const [error, setError] = useState<Error | null>(null);

  const check = useCallback(async () => {
    if (!getToken()) {
      setState("signed-out");
      return;
    }
    setState("checking");
    try {
      setSession(await client.session());
      setState("ready");
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) {
        setToken("");
        setError(err);
        setState("signed-out");
      } else {
        setError(err as Error);
        setState("error");
      }
    }
  }, []);
  useEffect(() => {
    void check();
  }, [check]);

  const signOut = () => {
    setToken("");
    setSession(null);
    setError(null);
    setState("signed-out");
  };

  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href.fleet()}>
          Overseer
        </a>
        {state === "ready" ? (
          <nav aria-label="Views">
            {NAV.map((n) => (
              <a key={n.view} href={n.href} aria-current={route.view === n.view ? "page" : undefined}>
                {n.label}
              </a>
            ))}
            <a href="/docs">API</a>
          </nav>
        ) : null}
        <span class="spacer" />
        {session ? (
          <span class="who">
            <span class="muted">
              {session.token_name} ({session.scope})
            </span>{" "}
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </span>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        {state === "signed-out" ? (
          <SignIn
            problem={error?.message ?? null}
            onToken={(t) => {
              setToken(t);
              setError(null);
              void check();
            }}
          />
        ) : state === "checking" ? (
          <Loading what="your session" />
        ) : state === "error" && error ? (
          <ErrorState error={error} retry={check} />
        ) : (
          <View route={route} />
        )}
      </main>
    </SessionContext.Provider>
  );
}

function View({ route }: { route: Route }) {
  useEffect(() => {
    const titles: Record<Route["view"], string> = {
      fleet: "Fleet",
      needs: "Needs you",
      incidents: "Incidents",
      deliveries: "Notifications",
      workers: "Workers",
      charts: "Charts",
      project: "Project",
      intake: "Intake",
      task: "Task",
      run: "Run",
    };
    document.title = `${titles[route.view]} · Overseer`;
  }, [route]);
  switch (route.view) {
    case "fleet":
      return <FleetView />;
    case "needs":
      return <NeedsView />;
    case "incidents":
      return <IncidentsView />;
    case "deliveries":
      return <DeliveriesView />;
    case "workers":
      return <WorkersView />;
    case "charts":
      return <ChartsView project={route.project} />;
    case "project":
      return <ProjectView key={route.project} projectId={route.project} />;
    case "intake":
      return <IntakeView key={route.project} projectId={route.project} />;
    case "task":
      return (
        <TaskView key={`${route.project}/${route.task}`} projectId={route.project} taskId={route.task} />
      );
    case "run":
      return <RunView key={route.run} runId={route.run} />;
  }
}
