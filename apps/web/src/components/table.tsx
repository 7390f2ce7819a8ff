import type { ComponentChildren } from "preact";

/**
 * A scrollable table with a header row of `columns`, and a last, visually hidden "Actions"
 * column when `actions` (its cells hold the row's buttons); `children` are the body rows.
 */
export function Table({
  columns,
  actions = false,
  children,
}: {
  columns: readonly string[];
  actions?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
            {actions ? (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
