import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import { useSession } from "../lib/hooks.ts";
import { ConfirmButton } from "./confirm-button.tsx";

/**
 * Pause, resume, stop and start (with stage and session budget), each confirmed first and
 * shown only when the token's scope allows it (stop needs admin, the rest operate).
 */
export function ProjectControls({
  projectId,
  status,
  onDone,
}: {
  projectId: string;
  status: string;
  onDone: () => void;
}) {
  const session = useSession();
  const [stage, setStage] = useState("");
  const [budget, setBudget] = useState("");
  if (!session?.can_operate) return null;
  const run = (fn: () => Promise<unknown>) => async () => {
    await fn();
    onDone();
  };
  return (
    <fieldset class="controls">
      <legend class="sr-only">Project controls</legend>
      {status === "active" ? (
        <ConfirmButton
          label="Pause"
          testId="pause-project"
          title={`Pause ${projectId}?`}
          consequence="No new run starts; runs in progress finish."
          onConfirm={run(() => client.setProjectStatus(projectId, "pause", "paused from the web app"))}
        />
      ) : (
        <ConfirmButton
          label="Resume"
          testId="resume-project"
          title={`Resume ${projectId}?`}
          consequence="Scheduling starts again with a fresh session budget."
          onConfirm={run(() => client.setProjectStatus(projectId, "resume", "resumed from the web app"))}
        />
      )}
      <ConfirmButton
        label="Start…"
        testId="start-project"
        title={`Start ${projectId}`}
        consequence="The project becomes active with a fresh session budget; an empty stage means every stage."
        fields={
          <div class="fields">
            <label>
              Stage{" "}
              <input
                value={stage}
                onInput={(e) => setStage((e.currentTarget as HTMLInputElement).value)}
                placeholder="all"
              />
            </label>
            <label>
              Session budget{" "}
              <input
                type="number"
                min={1}
                max={100000}
                value={budget}
                onInput={(e) => setBudget((e.currentTarget as HTMLInputElement).value)}
                placeholder="runner config"
              />
            </label>
          </div>
        }
        onConfirm={run(() =>
          client.start(projectId, stage.trim() || null, budget.trim() ? Number(budget) : null),
        )}
      />
      {session.can_admin && status !== "stopped" ? (
        <ConfirmButton
          label="Stop"
          danger
          testId="stop-project"
          title={`Stop ${projectId}?`}
          consequence="Runs in progress are cancelled and nothing is scheduled until the project is started again."
          onConfirm={run(() => client.setProjectStatus(projectId, "stop", "stopped from the web app"))}
        />
      ) : null}
    </fieldset>
  );
}
