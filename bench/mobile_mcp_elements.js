// mobile-mcp's answer to `mobile_list_elements_on_screen` (adb mode) for uiautomator dumps, made by
// its own code: AndroidRobot.getElementsOnScreen (its XML parsing and element filter) and
// formatElements(elements, "text"), with only the `adb exec-out uiautomator dump` call replaced
// by the dump given. Reads JSON [xml, ...] on stdin, writes JSON [answer, ...] on stdout.
// Usage: node mobile_mcp_elements.js NODE_MODULES_DIR
const path = require("node:path");
const lib = path.join(process.argv[2], "@mobilenext", "mobile-mcp", "lib");
const { AndroidRobot } = require(path.join(lib, "android.js"));
const { formatElements } = require(path.join(lib, "format-elements.js"));

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", async () => {
  const out = [];
  for (const xml of JSON.parse(input)) {
    const robot = Object.create(AndroidRobot.prototype);
    // getUiAutomatorDump's own post-processing: the text from "<?xml" on.
    robot.getUiAutomatorDump = async () => xml.substring(xml.indexOf("<?xml"));
    out.push(formatElements(await robot.getElementsOnScreen(), "text"));
  }
  process.stdout.write(JSON.stringify(out));
});
