// What pi's session code (1.5.2, 1.6.0) takes from @earendil-works/pi-ai, from that install's pi-ai
// own files. pi-ai's index also loads its providers, which need packages this
// registry does not serve; pi_session.mjs points session-manager.js here instead.
export { getCurrentSystemMessage } from "@earendil-works/pi-ai/utils/transcript";
export { uuidv7 } from "@earendil-works/pi-ai/utils/uuid";
