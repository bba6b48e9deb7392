/** Running as a service: the systemd notify protocol (READY, WATCHDOG, STOPPING). */
export { SystemdNotifier } from './notify.js';
