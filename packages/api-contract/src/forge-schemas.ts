import { z } from "./openapi-zod.ts";

/** The answer to a forge webhook delivery: stored now, or a redelivery already stored. */
export const ForgeDeliveryAcceptedSchema = z
  .object({
    forge: z.enum(["github", "gitlab", "gitea"]),
    delivery_id: z.string(),
    event: z.string(),
    stored: z
      .boolean()
      .openapi({ description: "false: this delivery id was stored before (a redelivery); nothing changed." }),
  })
  .openapi("ForgeDeliveryAccepted");
