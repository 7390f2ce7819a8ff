/**
 * The operator's token lives in sessionStorage (gone when the tab closes), is sent only as a
 * bearer header, and is never written into a URL, a log line or the DOM.
 */
const KEY = "overseer.token";

export function getToken(): string {
  try {
    return sessionStorage.getItem(KEY) ?? "";
  } catch {
    return "";
  }
}

export function setToken(value: string): void {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}
