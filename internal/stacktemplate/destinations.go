package stacktemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// maxDestinationsLen is the longest DESTINATIONS value written: Lambda
// allows 4 KB for a function's whole environment, and hookinbox's own
// variables take about half.
const maxDestinationsLen = 2048

// addDestinations writes the business file's Destinations (a list of
// destination.Config, validated) into the template root: the processor's
// DESTINATIONS; ProcessorRole's grants, secretsmanager:GetSecretValue on
// each secret ARN listed and events:PutEvents on each bus, nothing more;
// two alarms per URL destination, parked and gone, and one per bus,
// parked, on the alarm topic and in the dashboard's alarm widget.
func addDestinations(root, list *yaml.Node) error {
	cfgs, err := decodeDestinations(list)
	if err != nil {
		return err
	}
	if err := setDestinationsVariable(root, cfgs); err != nil {
		return err
	}
	var secrets, buses []string
	var alarms, resources strings.Builder
	ids := map[string]string{}
	for _, c := range cfgs {
		for _, arn := range c.SecretARNs() {
			if !slices.Contains(secrets, arn) {
				secrets = append(secrets, arn)
			}
		}
		if c.IsBus() && !slices.Contains(buses, busARN(c.Bus)) {
			buses = append(buses, busARN(c.Bus))
		}
		id := "Destination" + camel(c.Name)
		if other, ok := ids[id]; ok {
			return fmt.Errorf("in Destinations: %q and %q make the same resource name %s: rename one", other, c.Name, id)
		}
		ids[id] = c.Name
		writeAlarms(&resources, &alarms, id, c)
	}
	var res yaml.Node
	if err := yaml.Unmarshal([]byte(resources.String()), &res); err != nil {
		return fmt.Errorf("destination alarms: %w", err)
	}
	if err := merge(root, "Resources", res.Content[0]); err != nil {
		return err
	}
	if err := listAlarms(root, alarms.String()); err != nil {
		return err
	}
	return grant(root, secrets, buses)
}

// setDestinationsVariable sets the processor's DESTINATIONS to cfgs, as
// JSON.
func setDestinationsVariable(root *yaml.Node, cfgs []destination.Config) error {
	raw, err := json.Marshal(cfgs)
	if err != nil {
		return err
	}
	if len(raw) > maxDestinationsLen {
		return fmt.Errorf("in Destinations: %d bytes as JSON, over %d: Lambda allows 4 KB for all of a function's environment", len(raw), maxDestinationsLen)
	}
	env := value(root, "Resources", "ProcessorFunction", "Properties", "Environment", "Variables", "DESTINATIONS")
	if env == nil {
		return errors.New("hookinbox's template: ProcessorFunction has no DESTINATIONS variable")
	}
	env.Kind, env.Tag, env.Style, env.Value = yaml.ScalarNode, "!!str", yaml.SingleQuotedStyle, string(raw)
	return nil
}

// writeAlarms writes the alarms of destination c, whose resources are
// named id...: their resources to resources, their ARNs (for the
// dashboard's alarm widget) to arns. A URL gets two, parked and gone; a
// bus, which answers no 410, one.
func writeAlarms(resources, arns *strings.Builder, id string, c destination.Config) {
	kinds := []struct{ suffix, metric, what, runbook string }{
		{"ParkedAlarm", "DestinationParked", "parked events", "A destination parked events"},
		{"GoneAlarm", "DestinationGone", "answered 410 Gone", "A destination is gone"},
	}
	if c.IsBus() {
		kinds = kinds[:1]
	}
	for _, a := range kinds {
		fmt.Fprintf(resources, `%s%s:
  Type: AWS::CloudWatch::Alarm
  Properties:
    AlarmDescription: "The destination %s %s. See docs/operations.md, \"%s\"."
    Namespace: !Sub "hookinbox/${AWS::StackName}"
    MetricName: %s
    Dimensions:
      - Name: Destination
        Value: %s
    Statistic: Sum
    Period: 300
    EvaluationPeriods: 1
    Threshold: 0
    ComparisonOperator: GreaterThanThreshold
    TreatMissingData: notBreaching
    AlarmActions:
      - !Ref AlarmTopic
    OKActions:
      - !Ref AlarmTopic
`, id, a.suffix, c.Name, a.what, a.runbook, a.metric, c.Name)
		fmt.Fprintf(arns, `,"${%s%s.Arn}"`, id, a.suffix)
	}
}

// decodeDestinations reads the Destinations list, refusing unknown
// fields, and validates it.
func decodeDestinations(list *yaml.Node) ([]destination.Config, error) {
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(list); err != nil {
		return nil, fmt.Errorf("in Destinations: %w", err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	var cfgs []destination.Config
	if err := dec.Decode(&cfgs); err != nil {
		return nil, fmt.Errorf("in Destinations: want a list of destinations (name, url or bus, events, secret, header, header_secret, concurrency): %w", err)
	}
	if len(cfgs) == 0 {
		return nil, errors.New("in Destinations: the list is empty")
	}
	if err := destination.Validate(cfgs, false); err != nil {
		return nil, fmt.Errorf("in Destinations: %w", err)
	}
	return cfgs, nil
}

// listAlarms puts the destinations' alarms (",\"${Id.Arn}\"...") in the
// dashboard's alarm widget, through its DestinationAlarms variable.
func listAlarms(root *yaml.Node, alarms string) error {
	sub := value(root, "Resources", "Dashboard", "Properties", "DashboardBody")
	if sub == nil || sub.Tag != "!Sub" || len(sub.Content) != 2 {
		return errors.New("hookinbox's template: the Dashboard's DashboardBody is not a !Sub with variables")
	}
	v := value(sub.Content[1], "DestinationAlarms")
	if v == nil {
		return errors.New("hookinbox's template: the Dashboard has no DestinationAlarms variable")
	}
	v.Tag, v.Style, v.Value = "!Sub", yaml.SingleQuotedStyle, alarms
	return nil
}

// grant adds ProcessorRole's statements for the destinations, and says in
// ProcessorFunction's Metadata why the IAM check sees no request use them.
func grant(root *yaml.Node, secrets, buses []string) error {
	var b strings.Builder
	var exempt strings.Builder
	why := "Destinations are configured by the business file; the destinations' own tests call this, outside the IAM check of hookinbox's template."
	if len(secrets) > 0 {
		b.WriteString("- Sid: DestinationSecrets\n  Effect: Allow\n  Action: secretsmanager:GetSecretValue\n  Resource:\n")
		for _, arn := range secrets {
			fmt.Fprintf(&b, "    - %q\n", arn)
			fmt.Fprintf(&exempt, "- Action: secretsmanager:GetSecretValue\n  Resource: %q\n  Why: %q\n", arn, why)
		}
	}
	if len(buses) > 0 {
		b.WriteString("- Sid: DestinationBuses\n  Effect: Allow\n  Action: events:PutEvents\n  Resource:\n")
		for _, arn := range buses {
			fmt.Fprintf(&b, "    - %s\n", arn)
			fmt.Fprintf(&exempt, "- Action: events:PutEvents\n  Resource: %s\n  Why: %q\n", arn, why)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	var st, ex yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &st); err != nil {
		return fmt.Errorf("destination grants: %w", err)
	}
	if err := yaml.Unmarshal([]byte(exempt.String()), &ex); err != nil {
		return fmt.Errorf("destination grants: %w", err)
	}
	statements, err := processorStatements(root)
	if err != nil {
		return err
	}
	statements.Content = append(statements.Content, st.Content[0].Content...)
	list := value(root, "Resources", "ProcessorFunction", "Metadata", "UnexercisedGrants")
	if list == nil || list.Kind != yaml.SequenceNode {
		return errors.New("hookinbox's template: ProcessorFunction has no Metadata UnexercisedGrants list")
	}
	list.Content = append(list.Content, ex.Content[0].Content...)
	return nil
}

// busARN returns the PutEvents resource of bus: its ARN as given, or the
// ARN of the bus of that name in the stack's account and region.
func busARN(bus string) string {
	if strings.HasPrefix(bus, "arn:") {
		return fmt.Sprintf("%q", bus)
	}
	return fmt.Sprintf(`!Sub "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:event-bus/%s"`, bus)
}

// camel turns a destination name ("crm-eu") into a logical ID part ("CrmEu").
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
